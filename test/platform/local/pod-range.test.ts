// The Pod network range must be free on the host (pod-network.ts, podRangeConflict): a route or
// an address of a real network in 198.18.0.0/16 would have its traffic taken by the Pods' host
// routes or a gone Pod's blackhole. Draincheck's own routes, addresses and blackholes are not a
// conflict; a covering or overlapping route, an address on another link are. Text in, as
// `ip -o route show` and `ip -o -4 addr show` print it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { podRangeConflict } from '../../../src/platform/local/pod-network.js';

const ours = {
  routes: [
    'default via 192.0.2.1 dev eth0 ',
    '192.0.2.0/24 dev eth0 proto kernel scope link src 192.0.2.2 ',
    '198.18.17.42 dev dcp-17-42 scope link src 198.18.0.1 ',
    'blackhole 198.18.3.9 ',
  ].join('\n'),
  addrs: [
    '1: lo    inet 127.0.0.1/8 scope host lo\\       valid_lft forever preferred_lft forever',
    '4: eth0    inet 192.0.2.2/24 brd 192.0.2.255 scope global eth0\\       valid_lft forever preferred_lft forever',
    '9: dcp-17-42@if2    inet 198.18.0.1/32 scope global dcp-17-42\\       valid_lft forever preferred_lft forever',
  ].join('\n'),
};

test("draincheck's own Pod routes, addresses and blackholes, and the default route, are no conflict", () => {
  assert.equal(podRangeConflict(ours.routes, ours.addrs), null);
  assert.equal(podRangeConflict('', ''), null);
});

test('a route or an address of another network in or around 198.18.0.0/16 is a conflict, named', () => {
  const cases: Array<[string, string, RegExp]> = [
    ['198.18.5.0/24 via 10.0.0.1 dev eth1 ', '', /^route 198\.18\.5\.0\/24 via/],
    // A covering route: 198.18.0.0/15 holds the whole Pod range.
    ['198.18.0.0/15 dev eth1 scope link ', '', /^route 198\.18\.0\.0\/15/],
    ['198.18.0.1 dev eth1 scope link ', '', /^route 198\.18\.0\.1 dev eth1/],
    ['unreachable 198.18.0.0/16 ', '', /^route unreachable/],
    // A blackhole of a whole subnet is not one of a gone Pod's /32s.
    ['blackhole 198.18.7.0/24 ', '', /^route blackhole 198\.18\.7\.0\/24/],
    [
      '',
      '5: eth1    inet 198.18.9.9/24 brd 198.18.9.255 scope global eth1',
      /^address 198\.18\.9\.9\/24 on eth1$/,
    ],
  ];
  for (const [routes, addrs, want] of cases) {
    const got = podRangeConflict(`${ours.routes}\n${routes}`, `${ours.addrs}\n${addrs}`);
    assert.match(got ?? 'null', want, `${routes}${addrs}`);
  }
});

test('neighbouring ranges are not the Pod range', () => {
  for (const route of [
    '198.19.0.0/16 dev eth1 ',
    '198.17.255.0/24 dev eth1 ',
    '10.0.0.0/8 via 192.0.2.1 dev eth0 ',
  ])
    assert.equal(podRangeConflict(route, ''), null, route);
  assert.equal(podRangeConflict('', '5: eth1    inet 198.19.0.1/16 scope global eth1'), null);
});
