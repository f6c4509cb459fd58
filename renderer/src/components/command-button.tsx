// A button that runs an async command and stays disabled until it settles, so a slow host
// never receives the same click twice, and while the host is gone. Failures are reported by the command itself.

import { useState, type ReactNode } from 'react';
import { OFFLINE_TITLE, useHostOnline } from './connection-notice';

export interface CommandButtonProps {
  readonly onRun: () => Promise<unknown>;
  readonly disabled?: boolean;
  readonly children: ReactNode;
  readonly label?: string;
  readonly title?: string;
  readonly variant?: 'primary' | 'default' | 'danger' | 'small';
}

export function CommandButton({ onRun, disabled = false, children, label, title, variant = 'default' }: CommandButtonProps) {
  const [busy, setBusy] = useState(false);
  // Nothing can be sent while the host is gone: the button says so instead of failing later.
  const online = useHostOnline();
  const run = () => {
    setBusy(true);
    onRun().finally(() => setBusy(false));
  };
  return (
    <button type="button" className={`btn btn-${variant}`} disabled={disabled || busy || !online} aria-busy={busy} aria-label={label}
      title={online ? title : OFFLINE_TITLE} onClick={run}>
      {children}
    </button>
  );
}
