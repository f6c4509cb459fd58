// Registers with Chart.js only the pieces the history views draw (tree-shaken bundle), once, and
// the zoom plugin (wheel zoom, drag pan) with the project's own annotation and background plugins.

import {
  BarController, BarElement, Chart, Decimation, Filler, Legend, LinearScale, LineController, LineElement, PointElement,
  ScatterController, Tooltip,
} from 'chart.js';
import zoomPlugin from 'chartjs-plugin-zoom';
import { annotationPlugin } from './annotation-plugin';
import { backgroundPlugin, drawCounterPlugin } from './chart-plugins';

let registered = false;

/** Idempotent: the first chart created calls it. */
export function setupCharts(): void {
  if (registered) return;
  registered = true;
  Chart.register(
    LineController, ScatterController, BarController, LineElement, PointElement, BarElement, LinearScale,
    Tooltip, Legend, Filler, Decimation, zoomPlugin, annotationPlugin, backgroundPlugin, drawCounterPlugin,
  );
}
