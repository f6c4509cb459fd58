// Public entry of the local test site used by the demo, the tests and the benchmarks.
// Import from here; the other modules of this folder are its internals.

export {
  parseScenario,
  ScenarioError,
  HOST_DEFAULTS,
  SOFT_BLOCK_BODY,
  type Scenario,
  type ScenarioInput,
  type HostSpec,
  type HostInput,
  type LatencySpec,
  type RateLimitSpec,
  type RobotsSpec,
  type RedirectSpec,
  type QuotaSpec,
  type SoftBlockSpec,
  type RetryAfterFormat,
  type RateLimitHeaders,
} from './scenario';
export {
  startTestSite,
  type TestSite,
  type TestSiteOptions,
  type TestSiteListener,
  type BlockInterval,
  type InFlightStats,
} from './server';
export type { LogEntry, LogMark } from './request-log';
export { pagePath, pageIndex, pageLinks, robotsText, PAGE_FANOUT } from './pages';
export { resolveLookup, curlResolveEntries } from './resolve-lookup';
export { demoScenario, demoSeeds, demoResolve } from './demo-scenario';
export { mulberry32 } from './random';
