// The resolver files of a Pod and the order of the names asked (glibc's rules), as pure functions
// of the files' text.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  hostsAddresses,
  parseHosts,
  parseResolvConf,
  resolvConfDefaults,
  searchNames,
} from '../../src/probe/resolv-conf.js';

// What the kubelet writes into a Pod of namespace `lab` with dnsPolicy ClusterFirst.
const podResolvConf = [
  'search lab.svc.cluster.local svc.cluster.local cluster.local',
  'nameserver 10.96.0.10',
  'options ndots:5',
  '',
].join('\n');

test('resolv.conf of a Pod: the search list and ndots:5; glibc defaults for the rest', () => {
  assert.deepEqual(parseResolvConf(podResolvConf), {
    search: ['lab.svc.cluster.local', 'svc.cluster.local', 'cluster.local'],
    ndots: 5,
    timeoutMs: 5000,
    attempts: 2,
  });
  assert.deepEqual(parseResolvConf(''), resolvConfDefaults);
});

test('resolv.conf: the last search or domain line wins; options are capped as glibc caps them', () => {
  const conf = parseResolvConf(
    [
      '# comment',
      '; comment too',
      'search a.example b.example.',
      'domain only.example extra.example',
      'options ndots:99 timeout:600 attempts:9 rotate ndots:x',
    ].join('\n'),
  );
  assert.deepEqual(conf, { search: ['only.example'], ndots: 15, timeoutMs: 30_000, attempts: 5 });
  assert.deepEqual(parseResolvConf('domain x.example\nsearch a.example b.example.\n').search, [
    'a.example',
    'b.example',
  ]);
  const many = `search ${Array.from({ length: 40 }, (_, i) => `d${i}.example`).join(' ')}\n`;
  assert.equal(parseResolvConf(many).search.length, 32, 'Kubernetes allows 32 search domains');
  assert.deepEqual(parseResolvConf('options timeout:0 attempts:0\n'), {
    ...resolvConfDefaults,
    timeoutMs: 1000,
    attempts: 1,
  });
});

test('fewer dots than ndots: every search suffix first, then the name as it is', () => {
  const conf = parseResolvConf(podResolvConf);
  assert.deepEqual(searchNames('work', conf), [
    'work.lab.svc.cluster.local',
    'work.svc.cluster.local',
    'work.cluster.local',
    'work',
  ]);
  assert.deepEqual(searchNames('work.lab.svc', conf), [
    'work.lab.svc.lab.svc.cluster.local',
    'work.lab.svc.svc.cluster.local',
    'work.lab.svc.cluster.local',
    'work.lab.svc',
  ]);
});

test('ndots or more dots: the name as it is first; a trailing dot: only the name', () => {
  const conf = { search: ['lab.svc.cluster.local', 'cluster.local'], ndots: 2 };
  assert.deepEqual(searchNames('work.lab.svc', conf), [
    'work.lab.svc',
    'work.lab.svc.lab.svc.cluster.local',
    'work.lab.svc.cluster.local',
  ]);
  assert.deepEqual(searchNames('work.lab.svc.cluster.local.', parseResolvConf(podResolvConf)), [
    'work.lab.svc.cluster.local',
  ]);
  assert.deepEqual(searchNames('work', { search: [], ndots: 1 }), ['work']);
});

test('names that cannot be asked are left out, and none are asked twice', () => {
  const long = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(50)}`;
  assert.deepEqual(searchNames(long, { search: ['cluster.local'], ndots: 5 }), [long]);
  assert.deepEqual(searchNames('.', { search: ['cluster.local'], ndots: 5 }), []);
  assert.deepEqual(searchNames('a..b', { search: [], ndots: 1 }), []);
  assert.deepEqual(searchNames('w', { search: ['x.example', 'x.example'], ndots: 1 }), ['w.x.example', 'w']);
});

test('/etc/hosts: names and aliases without case, comments and bad lines skipped', () => {
  // What the kubelet writes (pkg/kubelet/kubelet_pods.go: managedHostsFileContent), plus noise.
  const table = parseHosts(
    [
      '# Kubernetes-managed hosts file.',
      '127.0.0.1\tlocalhost',
      '::1\tlocalhost ip6-localhost ip6-loopback',
      '10.244.0.7\twork-r1-client',
      '10.244.0.8 Work.Alias.  other # a comment',
      'not-an-address name',
      '10.244.0.9',
      '10.244.0.8 other',
    ].join('\n'),
  );
  assert.deepEqual(hostsAddresses(table, 'localhost', 0), [
    { address: '127.0.0.1', family: 4 },
    { address: '::1', family: 6 },
  ]);
  assert.deepEqual(hostsAddresses(table, 'localhost', 6), [{ address: '::1', family: 6 }]);
  assert.deepEqual(hostsAddresses(table, 'work.alias', 4), [{ address: '10.244.0.8', family: 4 }]);
  assert.deepEqual(hostsAddresses(table, 'WORK.ALIAS.', 0), [{ address: '10.244.0.8', family: 4 }]);
  assert.deepEqual(hostsAddresses(table, 'other', 0), [{ address: '10.244.0.8', family: 4 }]);
  assert.deepEqual(hostsAddresses(table, 'name', 0), []);
  assert.deepEqual(hostsAddresses(table, 'work-r1-client', 6), []);
});
