// Every case recorded from the real Scrapy AutoThrottle replays through the engine's own slot
// and policy code and matches bit for bit (delays with ===, debug lines byte for byte).
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runVectorCase, runVectorFile, type VectorCase } from '../../../electron/core/engine/throttle/conformance';

const file = process.env.SLOTSCOPE_VECTORS ?? join(__dirname, '../../fixtures/conformance/autothrottle-vectors.json');

describe('AutoThrottle conformance vectors', () => {
  it('the vectors file is there', () => {
    expect(existsSync(file), `missing ${file}`).toBe(true);
  });
  const json = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : { cases: [] };
  for (const c of json.cases as VectorCase[]) {
    it(c.name, () => {
      const r = runVectorCase(c);
      expect(r.difference ?? null).toBe(null);
      expect(r.pass).toBe(true);
    });
  }
  it('detects a single altered delay (the replay can fail)', () => {
    const c = structuredClone(json.cases.find((x: VectorCase) => x.name === 'default_converge_fast_server')) as { expected_delays: number[] } & VectorCase;
    c.expected_delays[3] = 0.40625000000000006;
    const r = runVectorFile({ cases: [c] });
    expect(r[0].pass).toBe(false);
    expect(r[0].difference).toMatch(/event 3: delay 0.40625, expected 0.40625000000000006/);
  });
  it('detects an altered debug line', () => {
    const c = structuredClone(json.cases.find((x: VectorCase) => x.name === 'debug_log_basic')) as VectorCase & { expected_logs: string[] };
    c.expected_logs[0] = c.expected_logs[0].replace('(-500)', '(-499)');
    expect(runVectorCase(c).pass).toBe(false);
  });
});
