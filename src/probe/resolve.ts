// Name lookup for the client, as a Pod's system resolver does it (/etc/hosts, then DNS with the
// `search` list and `ndots` of /etc/resolv.conf), but without getaddrinfo: Node's default
// dns.lookup runs getaddrinfo in libuv's thread pool, where a lookup a silent DNS server never
// answers cannot be stopped and keeps the process alive — even process.exit() waits for it
// (libuv joins its threads at exit; see docs/FIDELITY-KUBE.md). The queries here go through
// c-ares (dns.promises.Resolver), which can be cancelled; close() cancels every one in flight.
// Failures carry the getaddrinfo codes the outcome taxonomy knows: ENOTFOUND (no such name),
// EAI_AGAIN (no answer in time, a server failure, or cancelled).
import { Resolver } from 'node:dns/promises';
import { open } from 'node:fs/promises';
import { isIP, type LookupFunction } from 'node:net';
import type { LookupAddress } from 'node:dns';
import {
  hostsAddresses,
  parseHosts,
  parseResolvConf,
  searchNames,
  type HostsTable,
  type ResolvConf,
} from './resolv-conf.js';

export interface NameLookupOptions {
  resolvConf: ResolvConf;
  hosts: HostsTable;
  /** Ask these servers (`127.0.0.1:5353`) instead of resolv.conf's `nameserver` lines. */
  servers?: string[];
  /** The whole lookup of one name (every search suffix, both families); then EAI_AGAIN. */
  lookupTimeoutMs: number;
}

export interface NameLookup {
  /** For http.request / net.connect. Always answers asynchronously. */
  lookup: LookupFunction;
  /** Cancel every lookup in flight (they fail with EAI_AGAIN); later lookups fail at once. */
  close: () => void;
}

/** The syscall named by this module's errors (getaddrinfo's are 'getaddrinfo'). */
export const LOOKUP_SYSCALL = 'lookup';

// How one query (one name, one record type) ended.
type QueryResult = { addresses: LookupAddress[] } | { failure: 'not-found' | 'server-failure' | 'no-answer' };
const noAnswer: QueryResult = { failure: 'no-answer' };

export function createNameLookup(options: NameLookupOptions): NameLookup {
  const inFlight = new Set<{ resolver: Resolver; timer: NodeJS.Timeout }>();
  let closed = false;

  async function resolveName(hostname: string, family: 0 | 4 | 6): Promise<LookupAddress[]> {
    const literal = isIP(hostname);
    if (literal === 4 || literal === 6) return [{ address: hostname, family: literal }];
    // nsswitch `hosts: files dns`: /etc/hosts first, for the name as it is given.
    const fromHosts = hostsAddresses(options.hosts, hostname, family);
    if (fromHosts.length > 0) return fromHosts;
    const names = searchNames(hostname, options.resolvConf);
    if (names.length === 0) throw lookupError('ENOTFOUND', hostname, 'not a valid host name');
    if (closed) throw lookupError('EAI_AGAIN', hostname, 'the client is exiting');

    const resolver = new Resolver({
      timeout: options.resolvConf.timeoutMs,
      tries: options.resolvConf.attempts,
    });
    if (options.servers) resolver.setServers(options.servers);
    let timedOut = false;
    const entry = {
      resolver,
      timer: setTimeout(() => {
        timedOut = true;
        resolver.cancel();
      }, options.lookupTimeoutMs),
    };
    inFlight.add(entry);
    const tried = (n: number) => (n === 0 ? 'no name asked yet' : `asked ${summarize(names.slice(0, n))}`);
    try {
      let serverFailure = false;
      let asked = 0;
      for (const name of names) {
        // A deadline or close() between two names: cancel() only ends the queries in flight.
        const stopped = timedOut || closed;
        if (!stopped) asked += 1;
        const result = stopped ? noAnswer : await query(resolver, name, family);
        if ('addresses' in result) return result.addresses;
        // Like res_search: no such name (or no such record) → the next name; a server failure
        // → the next name, remembered; no answer at all → stop, the server is not answering.
        if (result.failure === 'server-failure') serverFailure = true;
        if (result.failure === 'no-answer') {
          const why = timedOut
            ? `no DNS answer within ${options.lookupTimeoutMs} ms`
            : closed
              ? 'the client is exiting'
              : 'no DNS answer';
          throw lookupError('EAI_AGAIN', hostname, `${why} (${tried(asked)})`);
        }
      }
      throw serverFailure
        ? lookupError('EAI_AGAIN', hostname, `DNS server failure (${tried(names.length)})`)
        : lookupError('ENOTFOUND', hostname, `no such name (${tried(names.length)})`);
    } finally {
      clearTimeout(entry.timer);
      inFlight.delete(entry);
      // Nothing of this lookup stays in flight, however it ended (a no-op when nothing is).
      resolver.cancel();
    }
  }

  const lookup: LookupFunction = (hostname, lookupOptions, callback) => {
    const family = familyOf(lookupOptions.family);
    resolveName(hostname, family).then(
      (addresses) => {
        const first = addresses[0] as LookupAddress;
        if (lookupOptions.all) callback(null, addresses);
        else callback(null, first.address, first.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, '', 0),
    );
  };

  return {
    lookup,
    close: () => {
      closed = true;
      for (const entry of inFlight) {
        clearTimeout(entry.timer);
        entry.resolver.cancel();
      }
    },
  };
}

/** A and AAAA (as getaddrinfo asks for an unspecified family), IPv4 addresses first. */
async function query(resolver: Resolver, name: string, family: 0 | 4 | 6): Promise<QueryResult> {
  const asks: Promise<QueryResult>[] = [];
  if (family !== 6) asks.push(ask(() => resolver.resolve4(name), 4));
  if (family !== 4) asks.push(ask(() => resolver.resolve6(name), 6));
  const results = await Promise.all(asks);
  const addresses = results.flatMap((r) => ('addresses' in r ? r.addresses : []));
  if (addresses.length > 0) return { addresses };
  const failures = results.map((r) => ('failure' in r ? r.failure : 'not-found'));
  if (failures.includes('no-answer')) return { failure: 'no-answer' };
  if (failures.includes('server-failure')) return { failure: 'server-failure' };
  return { failure: 'not-found' };
}

async function ask(resolve: () => Promise<string[]>, family: 4 | 6): Promise<QueryResult> {
  try {
    const addresses = await resolve();
    if (addresses.length === 0) return { failure: 'not-found' };
    return { addresses: addresses.map((address) => ({ address, family })) };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // c-ares' codes (lib/internal/dns/utils.js): NXDOMAIN, NODATA and a bad name mean there is
    // no such address; SERVFAIL is the server's own failure; the rest (ETIMEOUT, ECANCELLED,
    // ECONNREFUSED, EREFUSED, ...) mean no usable answer came.
    if (code === 'ENOTFOUND' || code === 'ENODATA' || code === 'EBADNAME') return { failure: 'not-found' };
    if (code === 'ESERVFAIL') return { failure: 'server-failure' };
    return { failure: 'no-answer' };
  }
}

function familyOf(family: number | string | undefined): 0 | 4 | 6 {
  if (family === 4 || family === 'IPv4') return 4;
  if (family === 6 || family === 'IPv6') return 6;
  return 0;
}

function lookupError(code: string, hostname: string, why: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code} ${hostname}: ${why}`), {
    code,
    syscall: LOOKUP_SYSCALL,
    hostname,
  });
}

function summarize(names: string[]): string {
  const shown = names.slice(0, 4).join(', ');
  return names.length > 4 ? `${shown} and ${names.length - 4} more` : shown;
}

/** Bounds for the files read: a Pod's are a few hundred bytes; more is not a resolver file. */
const RESOLV_CONF_MAX_BYTES = 64 * 1024;
const HOSTS_MAX_BYTES = 1024 * 1024;

/** /etc/resolv.conf and /etc/hosts as the system resolver reads them; a missing file is empty. */
export async function readSystemResolverFiles(
  paths = { resolvConf: '/etc/resolv.conf', hosts: '/etc/hosts' },
): Promise<{ resolvConf: ResolvConf; hosts: HostsTable }> {
  const [resolvConf, hosts] = await Promise.all([
    readBounded(paths.resolvConf, RESOLV_CONF_MAX_BYTES),
    readBounded(paths.hosts, HOSTS_MAX_BYTES),
  ]);
  return { resolvConf: parseResolvConf(resolvConf), hosts: parseHosts(hosts) };
}

async function readBounded(path: string, maxBytes: number): Promise<string> {
  let file;
  try {
    file = await open(path, 'r');
  } catch (error) {
    // No file: the resolver's defaults (glibc does the same), not a crash.
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw error;
  }
  try {
    const buffer = Buffer.alloc(maxBytes);
    const { bytesRead } = await file.read(buffer, 0, maxBytes, 0);
    const text = buffer.subarray(0, bytesRead).toString('utf8');
    // Cut at the last whole line when the file was longer than the bound.
    return bytesRead === maxBytes ? text.slice(0, text.lastIndexOf('\n') + 1) : text;
  } finally {
    await file.close();
  }
}
