// Hands the app's stores and commands to every view. The context holds stable objects only:
// live data is read from the stores with useStore, never passed through context.

import { createContext, useContext } from 'react';
import type { AppState } from '../store/app-state';

export const AppContext = createContext<AppState | null>(null);

export function useApp(): AppState {
  const app = useContext(AppContext);
  if (!app) throw new Error('useApp outside <AppContext.Provider>');
  return app;
}
