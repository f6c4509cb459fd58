// One labelled figure of the crawl header, so every figure reads the same way; the value is set
// in tabular digits so live numbers don't jitter as they change.

import type { ReactNode } from 'react';

export function Stat({ label, children, testId }: { label: string; children: ReactNode; testId?: string }) {
  return (
    <div className="stat">
      <div className="stat-label">{label}</div>
      <div className="stat-value" data-testid={testId}>
        {children}
      </div>
    </div>
  );
}
