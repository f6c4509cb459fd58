// A sparkline on a small canvas drawn by hand (no Chart.js instance per table row): a line over the
// values with the last one dotted, coloured from the theme, redrawn when the values or scheme change.

import { useEffect, useRef, useState } from 'react';
import { onSchemeChange, readTheme } from './theme';

export function Sparkline({ values, width = 130, height = 24, label }: { values: readonly number[]; width?: number; height?: number; label: string }) {
  const ref = useRef<HTMLCanvasElement>(null);
  const [scheme, setScheme] = useState(0);
  useEffect(() => onSchemeChange(() => setScheme((n) => n + 1)), []);
  useEffect(() => {
    const canvas = ref.current;
    const ctx = canvas?.getContext('2d');
    if (!canvas || !ctx) return;
    const dpr = window.devicePixelRatio || 1;
    canvas.width = Math.round(width * dpr);
    canvas.height = Math.round(height * dpr);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, width, height);
    if (values.length === 0) return;
    const theme = readTheme();
    const max = Math.max(...values);
    const min = Math.min(0, ...values);
    const span = max - min || 1;
    const x = (i: number) => (values.length === 1 ? width / 2 : 2 + (i / (values.length - 1)) * (width - 4));
    const y = (v: number) => height - 2 - ((v - min) / span) * (height - 4);
    ctx.strokeStyle = theme.series.delay;
    ctx.lineWidth = 1.25;
    ctx.beginPath();
    values.forEach((v, i) => (i === 0 ? ctx.moveTo(x(i), y(v)) : ctx.lineTo(x(i), y(v))));
    ctx.stroke();
    ctx.fillStyle = theme.series.delay;
    ctx.beginPath();
    ctx.arc(x(values.length - 1), y(values[values.length - 1]), 2, 0, Math.PI * 2);
    ctx.fill();
  }, [values, width, height, scheme]);
  return <canvas ref={ref} className="sparkline" style={{ width, height }} role="img" aria-label={label} />;
}
