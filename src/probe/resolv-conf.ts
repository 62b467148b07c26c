// What the system resolver of a Pod reads before it asks DNS: /etc/hosts, then /etc/resolv.conf's
// `search` list and `ndots`. Pure functions of the files' contents, so the rules have their own
// tests. The rules are glibc's (the client image is Debian, node:20-bookworm-slim): resolv/res_init.c
// for the file, resolv/res_query.c (__res_context_search) for the order of the names tried.
import { isIP } from 'node:net';

export interface ResolvConf {
  /** `search` (or `domain`, whichever comes last), in order. */
  search: string[];
  /** `options ndots:N`: a name with fewer dots is tried with the search suffixes first. */
  ndots: number;
  /** `options timeout:N`, in ms: the first wait for an answer to one query. */
  timeoutMs: number;
  /** `options attempts:N`: how often a query is sent before giving up. */
  attempts: number;
}

/** /etc/hosts: lower-case name → its addresses, in file order. */
export type HostsTable = ReadonlyMap<string, readonly HostsAddress[]>;
export interface HostsAddress {
  address: string;
  family: 4 | 6;
}

// glibc's defaults and caps (resolv/resolv.h: RES_TIMEOUT 5, RES_DFLRETRY 2, RES_MAXNDOTS 15,
// RES_MAXRETRANS 30, RES_MAXRETRY 5).
export const resolvConfDefaults: ResolvConf = { search: [], ndots: 1, timeoutMs: 5000, attempts: 2 };
const MAX_NDOTS = 15;
const MAX_TIMEOUT_S = 30;
const MAX_ATTEMPTS = 5;
/** Kubernetes' own limits for a Pod's search list (pkg/apis/core/validation: MaxDNSSearchPaths 32). */
const MAX_SEARCH = 32;
/** A domain name's longest text form (RFC 1035: 255 octets on the wire). */
const MAX_NAME = 253;

/** The parts of resolv.conf that decide which names are asked and how long each waits. */
export function parseResolvConf(text: string): ResolvConf {
  const conf = { ...resolvConfDefaults, search: [] as string[] };
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const [keyword, ...args] = line.split(/\s+/);
    if (keyword === 'search' || keyword === 'domain') {
      // The last `search` or `domain` line wins (res_init.c); `domain` names one suffix.
      const names = (keyword === 'domain' ? args.slice(0, 1) : args)
        .map((d) => d.replace(/\.$/, ''))
        .filter((d) => d !== '' && d.length <= MAX_NAME);
      conf.search = names.slice(0, MAX_SEARCH);
    } else if (keyword === 'options') {
      for (const option of args) {
        const [name, value] = option.split(':', 2);
        const n = value !== undefined && /^\d{1,6}$/.test(value) ? Number(value) : null;
        if (n === null) continue;
        if (name === 'ndots') conf.ndots = Math.min(n, MAX_NDOTS);
        else if (name === 'timeout') conf.timeoutMs = Math.max(1, Math.min(n, MAX_TIMEOUT_S)) * 1000;
        else if (name === 'attempts') conf.attempts = Math.max(1, Math.min(n, MAX_ATTEMPTS));
      }
    }
  }
  return conf;
}

/** The names the resolver asks DNS for, in order (glibc's res_search). */
export function searchNames(name: string, conf: Pick<ResolvConf, 'search' | 'ndots'>): string[] {
  // A trailing dot makes a name absolute: asked as it is, never with a suffix.
  if (name.endsWith('.')) {
    const absolute = name.slice(0, -1);
    return validName(absolute) ? [absolute] : [];
  }
  const dots = name.split('.').length - 1;
  const withSuffixes = conf.search.map((domain) => `${name}.${domain}`);
  // ndots or more dots: the name as it is first, then the suffixes; fewer: the suffixes first.
  const order = dots >= conf.ndots ? [name, ...withSuffixes] : [...withSuffixes, name];
  return [...new Set(order.filter(validName))];
}

function validName(name: string): boolean {
  return name !== '' && name.length <= MAX_NAME && !name.startsWith('.') && !name.includes('..');
}

/** /etc/hosts: `address name [alias...]` lines; `#` starts a comment; bad lines are skipped. */
export function parseHosts(text: string): HostsTable {
  const table = new Map<string, HostsAddress[]>();
  for (const raw of text.split('\n')) {
    const [address, ...names] = (raw.split('#', 1)[0] ?? '').trim().split(/\s+/);
    const family = isIP(address ?? '');
    if (!address || (family !== 4 && family !== 6)) continue;
    for (const name of names) {
      const key = name.toLowerCase().replace(/\.$/, '');
      if (key === '' || key.length > MAX_NAME) continue;
      const list = table.get(key) ?? [];
      if (!list.some((a) => a.address === address)) list.push({ address, family });
      table.set(key, list);
    }
  }
  return table;
}

/** The addresses /etc/hosts gives a name (matched without case, as the name is given). */
export function hostsAddresses(table: HostsTable, name: string, family: 0 | 4 | 6): HostsAddress[] {
  const all = table.get(name.toLowerCase().replace(/\.$/, '')) ?? [];
  return family === 0 ? [...all] : all.filter((a) => a.family === family);
}
