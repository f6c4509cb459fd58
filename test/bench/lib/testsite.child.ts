// The project's test site in a process of its own, for benchmarks that read its request log
// (arrival times per host) while the measured engine has the other core to itself.

import { readFileSync } from 'node:fs';
import { startTestSite, type ScenarioInput } from '../../../electron/core/testsite';
import { serveMessages } from './children';

// argv: <scenario.json> <log.jsonl>
const [scenarioFile, logFile] = process.argv.slice(2);
const scenario = JSON.parse(readFileSync(scenarioFile, 'utf8')) as ScenarioInput;
const site = await startTestSite(scenario, { log: logFile });
process.send!({ type: 'ready', resolve: site.resolve, ports: site.ports });

serveMessages(async (m) => {
  if (m.type === 'close') {
    await site.close();
    return { closed: true };
  }
  if (m.type === 'usage') return { cpu: process.cpuUsage(), at: performance.now() };
  throw new Error(`unknown message ${String(m.type)}`);
}, () => site.close());
