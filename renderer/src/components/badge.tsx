// A small coloured label for a state (crawl status, slot state, connection), so states read
// the same everywhere and at a glance, in light and dark.

import type { ReactNode } from 'react';

export type Tone = 'ok' | 'info' | 'warn' | 'bad' | 'muted' | 'neutral';

export function Badge({ tone, children, title, testId }: { tone: Tone; children: ReactNode; title?: string; testId?: string }) {
  return (
    <span className={`badge badge-${tone}`} title={title} data-testid={testId}>
      {children}
    </span>
  );
}
