// A chart on screen: title, PNG export and a Table toggle over the canvas (the Chart.js instance
// lives in its ChartHandle); the table shows the same numbers, accessible and copyable as TSV.

import { memo, useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import { useStore } from '../store/use-store';
import type { ChartAnnotation } from './annotation-plugin';
import type { ChartHandle, XY } from './chart-handle';
import { clockMs } from './time-format';
import { onSchemeChange } from './theme';
import { byWhom } from '../views/journal/journal-words';

/** Attaches `handle` to the canvas while mounted, and rebuilds it when the colour scheme flips. */
export function useChart(handle: ChartHandle, canvasRef: React.RefObject<HTMLCanvasElement | null>): void {
  useEffect(() => {
    const canvas = canvasRef.current;
    if (!canvas) return;
    handle.attach(canvas);
    const off = onSchemeChange(() => handle.retheme());
    return () => {
      off();
      handle.detach();
    };
  }, [handle, canvasRef]);
}

interface Hover {
  readonly items: readonly ChartAnnotation[];
  readonly x: number;
  readonly y: number;
}

/** Memoised: a parent's re-render (a live status line) never re-renders the card; its data goes straight to the chart. */
export const ChartCard = memo(function ChartCard({ handle, height = 200, tools, className }: { handle: ChartHandle; height?: number; tools?: ReactNode; className?: string }) {
  const canvasRef = useRef<HTMLCanvasElement>(null);
  const bodyRef = useRef<HTMLDivElement>(null);
  useChart(handle, canvasRef);
  const [table, setTable] = useState(false);
  const [hover, setHover] = useState<Hover | null>(null);
  const { spec } = handle;

  useEffect(() => {
    handle.onAnnotationHover = (items, at) => setHover(items.length > 0 ? { items, x: at.x, y: at.y } : null);
    return () => {
      handle.onAnnotationHover = null;
    };
  }, [handle]);

  const savePng = () => {
    const url = handle.pngDataUrl();
    if (!url) return;
    const a = document.createElement('a');
    a.href = url;
    a.download = `slotscope-${spec.id}.png`;
    a.click();
  };

  return (
    <figure className={`chart-card${className ? ` ${className}` : ''}`} data-chart={spec.id} aria-label={spec.title}>
      <figcaption className="chart-head">
        <h4>{spec.title}</h4>
        {spec.description && <span className="chart-desc">{spec.description}</span>}
        <span className="chart-tools">
          {tools}
          <button type="button" className="btn btn-small" onClick={savePng} disabled={table} title="Save this chart as a PNG image">
            PNG
          </button>
          <button
            type="button"
            className={`btn btn-small${table ? ' btn-on' : ''}`}
            aria-pressed={table}
            onClick={() => setTable((t) => !t)}
            title="Show the chart's numbers as a table"
            data-testid={`table-toggle-${spec.id}`}
          >
            Table
          </button>
        </span>
      </figcaption>
      <div ref={bodyRef} className="chart-body" style={{ height }} hidden={table}>
        <canvas ref={canvasRef} role="img" aria-label={`${spec.title} chart; use the Table button for its numbers`} />
        {hover && <AnnotationPopover hover={hover} width={bodyRef.current?.clientWidth ?? 0} />}
      </div>
      {table && <ChartTable handle={handle} />}
    </figure>
  );
});

/** Who changed it, in words (the journal's). */
export const sourceWords = byWhom;

const POPOVER_PX = 340;

function AnnotationPopover({ hover, width }: { hover: Hover; width: number }) {
  const shown = hover.items.slice(0, 6);
  // Right of the pointer, or left of it near the right edge.
  const side = width > 0 && hover.x + 12 + POPOVER_PX > width ? { right: width - hover.x + 12 } : { left: hover.x + 12 };
  return (
    <div className="chart-popover" role="tooltip" style={{ ...side, top: Math.max(4, hover.y - 10), width: 'max-content', maxWidth: POPOVER_PX }} data-testid="annotation-popover">
      {shown.map((a, i) => (
        <div key={i} className={`pop-item ann-${a.kind}`}>
          <div className="pop-title">
            <span className="pop-swatch" aria-hidden="true" />
            {a.title}
          </div>
          <div className="pop-meta">
            {clockMs(a.t)}{a.title.includes(sourceWords(a.source)) ? '' : ` · ${sourceWords(a.source)}`}
          </div>
          {a.detail && <div className="pop-detail">{a.detail}</div>}
        </div>
      ))}
      {hover.items.length > shown.length && <div className="pop-meta">and {hover.items.length - shown.length} more here</div>}
    </div>
  );
}

const MAX_ROWS = 1000;

interface TableModel {
  readonly columns: readonly string[];
  readonly rows: readonly (readonly string[])[];
}

/** The chart's data as rows: one per x ('wide'), or one per point with its series ('long'). */
export function tableModel(handle: ChartHandle): TableModel {
  const { spec } = handle;
  const labels = handle.seriesLabels();
  const data = handle.allData();
  const fy = (y: number | null, s: number) => (y === null || y === undefined ? '' : spec.formatY ? spec.formatY(y, s) : String(y));
  if (spec.table === 'long') {
    const rows: { x: number; cells: string[] }[] = [];
    data.forEach((points, s) => {
      for (const p of points) rows.push({ x: p.x, cells: [spec.formatX(p.x), labels[s] ?? '', fy(p.y, s)] });
    });
    rows.sort((a, b) => a.x - b.x);
    return { columns: [spec.xLabel, 'Series', 'Value'], rows: rows.map((r) => r.cells) };
  }
  const byX = new Map<number, (number | null)[]>();
  data.forEach((points: readonly XY[], s) => {
    for (const p of points) {
      let row = byX.get(p.x);
      if (!row) byX.set(p.x, (row = new Array<number | null>(data.length).fill(null)));
      row[s] = p.y;
    }
  });
  const xs = [...byX.keys()].sort((a, b) => a - b);
  return {
    columns: [spec.xLabel, ...labels],
    rows: xs.map((x) => [spec.formatX(x), ...byX.get(x)!.map((y, s) => fy(y, s))]),
  };
}

const toTsv = (m: TableModel, notes: readonly ChartAnnotation[]) =>
  [m.columns.join('\t'), ...m.rows.map((r) => r.join('\t'))]
    .concat(notes.length ? ['', 'Time\tMark\tBy\tDetail', ...notes.map((a) => `${clockMs(a.t)}\t${a.title}\t${a.source}\t${a.detail ?? ''}`)] : [])
    .join('\n');

function ChartTable({ handle }: { handle: ChartHandle }) {
  const version = useStore(handle, versionOf);
  // The version is what says the data moved: recompute the rows when it does.
  const m = useMemo(() => tableModel(handle), [handle, version]);
  const notes = handle.currentAnnotations();
  const [copied, setCopied] = useState<string | null>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(toTsv(m, notes));
      setCopied(`Copied ${m.rows.length} rows`);
    } catch (e) {
      setCopied(`Copy failed (${e instanceof Error ? e.message : String(e)}); select the table and copy it`);
    }
  };
  const shown = m.rows.length > MAX_ROWS ? m.rows.slice(-MAX_ROWS) : m.rows;
  return (
    <div className="chart-table-wrap" data-testid={`chart-table-${handle.spec.id}`}>
      <div className="chart-table-tools">
        <span className="muted">
          {m.rows.length > MAX_ROWS ? `Latest ${MAX_ROWS.toLocaleString('en-US')} of ${m.rows.length.toLocaleString('en-US')} rows (Copy takes all)` : `${m.rows.length} rows`}
        </span>
        <button type="button" className="btn btn-small" onClick={() => void copy()}>
          Copy as TSV
        </button>
        {copied && <span className="muted" role="status">{copied}</span>}
      </div>
      <div className="table-scroll chart-table-scroll">
        <table className="grid chart-table">
          <caption className="visually-hidden">{handle.spec.title}</caption>
          <thead>
            <tr>
              {m.columns.map((c, i) => (
                <th key={i} scope="col" className={i === 0 ? 'left' : 'num'}>
                  {c}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {shown.map((r, i) => (
              <tr key={i}>
                {r.map((v, j) => (
                  <td key={j} className={j === 0 ? 'left mono' : 'num'}>
                    {v}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
        {notes.length > 0 && (
          <table className="grid chart-table chart-notes" data-testid={`chart-notes-${handle.spec.id}`}>
            <caption className="left">Marks on the time axis</caption>
            <thead>
              <tr>
                <th scope="col" className="left">Time</th>
                <th scope="col" className="left">Mark</th>
                <th scope="col" className="left">By</th>
                <th scope="col" className="left">Detail</th>
              </tr>
            </thead>
            <tbody>
              {notes.slice(-MAX_ROWS).map((a, i) => (
                <tr key={i} data-kind={a.kind}>
                  <td className="left mono">{clockMs(a.t)}</td>
                  <td className="left">{a.title}</td>
                  <td className="left">{a.source}</td>
                  <td className="left">{a.detail ?? ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </div>
    </div>
  );
}

const versionOf = (h: ChartHandle) => h.getVersion();
