// The renderer's entry: picks the transport (Electron bridge or WebSocket), builds the live
// stores on its one subscription, and mounts the React tree that reads them.

import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { createAppState } from './store/app-state';
import { pickTransport } from './transport/pick-transport';
import { App } from './views/app';
import { AppContext } from './views/app-context';
import './styles.css';
import './history.css';
import './requests.css';

const app = createAppState(pickTransport(window));
const root = document.getElementById('root');
if (!root) throw new Error('index.html has no #root');
createRoot(root).render(
  <StrictMode>
    <AppContext.Provider value={app}>
      <App />
    </AppContext.Provider>
  </StrictMode>,
);
