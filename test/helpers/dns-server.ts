// A real DNS server over UDP on loopback, for the client's resolver: it answers A queries for
// the names it is given, says NXDOMAIN for every other name, and never answers the names it is
// told to ignore (a cluster whose DNS does not answer). AAAA for a known name gets an empty
// answer (NODATA), as CoreDNS gives on an IPv4 cluster. Every query it receives is recorded.
import dgram from 'node:dgram';
import { once } from 'node:events';

export interface DnsQuery {
  name: string;
  type: 'A' | 'AAAA' | number;
}

export interface TestDnsServer {
  host: string;
  port: number;
  /** `host:port`, for Resolver#setServers. */
  server: string;
  queries: DnsQuery[];
  close: () => Promise<void>;
}

export interface TestDnsServerOptions {
  /** Name (lower case, no trailing dot) → IPv4 addresses. */
  a?: Record<string, string[]>;
  /** Names never answered; `*` ignores every query. */
  silent?: string[];
  host?: string;
  port?: number;
}

export async function startDnsServer(options: TestDnsServerOptions): Promise<TestDnsServer> {
  const host = options.host ?? '127.0.0.1';
  const socket = dgram.createSocket('udp4');
  const queries: DnsQuery[] = [];
  socket.on('message', (message, from) => {
    const question = parseQuestion(message);
    if (!question) return;
    const type = question.qtype === 1 ? 'A' : question.qtype === 28 ? 'AAAA' : question.qtype;
    queries.push({ name: question.name, type });
    const silent = options.silent ?? [];
    if (silent.includes('*') || silent.includes(question.name)) return;
    const addresses = options.a?.[question.name];
    const answers = addresses && question.qtype === 1 ? addresses : [];
    // NXDOMAIN (3) for unknown names; NOERROR with or without answers for known ones.
    const rcode = addresses ? 0 : 3;
    socket.send(response(message, question.end, rcode, answers), from.port, from.address);
  });
  socket.bind(options.port ?? 0, host);
  await once(socket, 'listening');
  const { port } = socket.address();
  return {
    host,
    port,
    server: `${host}:${port}`,
    queries,
    close: () => new Promise((resolve) => socket.close(() => resolve())),
  };
}

function parseQuestion(message: Buffer): { name: string; qtype: number; end: number } | null {
  if (message.length < 12 || message.readUInt16BE(4) !== 1) return null;
  const labels: string[] = [];
  let offset = 12;
  for (let guard = 0; guard < 128; guard += 1) {
    const length = message[offset];
    if (length === undefined || length > 63) return null;
    offset += 1;
    if (length === 0) break;
    labels.push(message.subarray(offset, offset + length).toString('latin1'));
    offset += length;
  }
  if (offset + 4 > message.length) return null;
  return { name: labels.join('.').toLowerCase(), qtype: message.readUInt16BE(offset), end: offset + 4 };
}

function response(query: Buffer, questionEnd: number, rcode: number, addresses: string[]): Buffer {
  const header = Buffer.alloc(12);
  header.writeUInt16BE(query.readUInt16BE(0), 0); // the query's id
  header.writeUInt16BE(0x8180 | rcode, 2); // QR, RD, RA
  header.writeUInt16BE(1, 4); // one question
  header.writeUInt16BE(addresses.length, 6);
  const answers = addresses.map((address) => {
    const record = Buffer.alloc(16);
    record.writeUInt16BE(0xc00c, 0); // the name: a pointer to the question's
    record.writeUInt16BE(1, 2); // A
    record.writeUInt16BE(1, 4); // IN
    record.writeUInt32BE(30, 6); // TTL
    record.writeUInt16BE(4, 10);
    address.split('.').forEach((octet, i) => record.writeUInt8(Number(octet), 12 + i));
    return record;
  });
  return Buffer.concat([header, query.subarray(12, questionEnd), ...answers]);
}
