// Public entry of the local test site used by the demo, the tests and the benchmarks.
// Import from here; the other modules of this folder are its internals.

export {
  parseScenario,
  ScenarioError,
  HOST_DEFAULTS,
  type Scenario,
  type ScenarioInput,
  type HostSpec,
  type HostInput,
  type LatencySpec,
  type RateLimitSpec,
  type RobotsSpec,
  type RedirectSpec,
} from './scenario';
export { startTestSite, type TestSite, type TestSiteOptions, type TestSiteListener } from './server';
export type { LogEntry } from './request-log';
export { pagePath, pageIndex, pageLinks, robotsText, PAGE_FANOUT } from './pages';
export { resolveLookup, curlResolveEntries } from './resolve-lookup';
export { demoScenario, demoSeeds, demoResolve } from './demo-scenario';
export { mulberry32 } from './random';
