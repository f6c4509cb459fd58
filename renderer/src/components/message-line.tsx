// The visible line where a refused or failed command explains itself (the host's AppError in words,
// with its code and field), until the user dismisses it or another message replaces it.

import { useApp } from '../views/app-context';
import { useStore } from '../store/use-store';
import type { MessageStore } from '../store/message-store';

const current = (s: MessageStore) => s.current();

export function MessageLine() {
  const { stores } = useApp();
  const message = useStore(stores.messages, current);
  // The live region is always there (empty and hidden when nothing is wrong), so a screen reader
  // announces a message the moment it is written into it.
  if (!message) return <div className="visually-hidden" role="alert" aria-live="assertive" aria-atomic="true" />;
  const { action, error } = message;
  return (
    <div className="message-line" role="alert" aria-live="assertive" aria-atomic="true" data-testid="message-line" data-code={error.code}>
      <span className="message-text">
        <strong>{action} failed:</strong> {error.message}
        <span className="message-meta">
          {' '}
          ({error.code}
          {error.field ? `, field ${error.field}` : ''})
        </span>
      </span>
      <button type="button" className="btn btn-small" onClick={() => stores.messages.dismiss(message.id)} aria-label="Dismiss message">
        Dismiss
      </button>
    </div>
  );
}
