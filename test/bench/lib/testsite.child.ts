// The project's test site in a process of its own, for benchmarks that read its request log
// (arrival times per host) while the measured engine has the other core to itself.

import { readFileSync } from 'node:fs';
import { startTestSite, type ScenarioInput } from '../../../electron/core/testsite';
import { serveMessages } from './children';

// argv: <scenario.json> <log.jsonl>
const [scenarioFile, logFile] = process.argv.slice(2);
const scenario = JSON.parse(readFileSync(scenarioFile, 'utf8')) as ScenarioInput;
const site = await startTestSite(scenario, { log: logFile });
// Epoch ms of the log's time 0 (within microseconds: the site sets it just before resolving),
// so a parent can put the engine's epoch times on the log's timebase: t = epoch - t0Epoch.
const t0Epoch = performance.timeOrigin + performance.now();
process.send!({ type: 'ready', resolve: site.resolve, ports: site.ports, hosts: site.hosts, t0Epoch });

serveMessages(async (m) => {
  if (m.type === 'close') {
    await site.close();
    return { closed: true };
  }
  if (m.type === 'usage') return { cpu: process.cpuUsage(), at: performance.now() };
  // The Retry-After blocks the host announced ({from, to} in the log's ms timebase).
  if (m.type === 'blocks') return { blocks: site.blocks(String(m.host)) };
  // Time-weighted requests in flight while the host served at least one ({mean, max, samples}).
  if (m.type === 'inflight') return { stats: site.inFlightStats(String(m.host)) };
  throw new Error(`unknown message ${String(m.type)}`);
}, () => site.close());
