// A DNS lookup that answers the test site's host names with their loopback addresses, so a
// real HTTP client can fetch `http://alpha.test:PORT/` (like curl --resolve) without touching DNS.

import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import type { LookupFunction } from 'node:net';

/**
 * A `lookup` for `net.connect` / undici `Agent({ connect: { lookup } })`: names in `resolve`
 * (host → address, e.g. `TestSite.resolve`) map to their address, others go to `dns.lookup`.
 */
export function resolveLookup(resolve: Readonly<Record<string, string>>): LookupFunction {
  return (hostname: string, options: LookupOptions, callback) => {
    const address = resolve[hostname.toLowerCase()];
    if (address === undefined || !Object.hasOwn(resolve, hostname.toLowerCase())) {
      dnsLookup(hostname, options, callback as (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void);
      return;
    }
    if (options.all) callback(null, [{ address, family: 4 }]);
    else callback(null, address, 4);
  };
}

/** curl-style `--resolve` entries, `name:port:address`, for the hosts of a site. */
export function curlResolveEntries(site: {
  readonly resolve: Readonly<Record<string, string>>;
  readonly ports: Readonly<Record<string, number>>;
}): string[] {
  return Object.entries(site.resolve).map(([name, address]) => `${name}:${site.ports[name]}:${address}`);
}
