// The rules of Pod Security "restricted" (which includes "baseline") as the PodSecurity
// admission plugin applies them to a Pod spec — https://kubernetes.io/docs/concepts/security/pod-security-standards/
// (k8s.io/pod-security-admission/policy). Returns one line per violation, in the plugin's
// terms, so a test can say which control a manifest breaks.
import type { V1Container, V1Pod } from '@kubernetes/client-node';

const RESTRICTED_VOLUMES = [
  'configMap',
  'csi',
  'downwardAPI',
  'emptyDir',
  'ephemeral',
  'persistentVolumeClaim',
  'projected',
  'secret',
];
const BASELINE_CAPABILITIES = [
  'AUDIT_WRITE', 'CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'FSETID', 'KILL', 'MKNOD', 'NET_BIND_SERVICE',
  'SETFCAP', 'SETGID', 'SETPCAP', 'SETUID', 'SYS_CHROOT',
]; // prettier-ignore
const SAFE_SYSCTLS = [
  'kernel.shm_rmid_forced', 'net.ipv4.ip_local_port_range', 'net.ipv4.ip_unprivileged_port_start',
  'net.ipv4.tcp_syncookies', 'net.ipv4.ping_group_range', 'net.ipv4.ip_local_reserved_ports',
  'net.ipv4.tcp_keepalive_time', 'net.ipv4.tcp_fin_timeout', 'net.ipv4.tcp_keepalive_intvl',
  'net.ipv4.tcp_keepalive_probes',
]; // prettier-ignore
const SELINUX_TYPES = ['', 'container_t', 'container_init_t', 'container_kvm_t', 'container_engine_t'];

export function restrictedViolations(pod: V1Pod): string[] {
  const spec = pod.spec;
  if (!spec) return ['no spec'];
  const out: string[] = [];
  const podSc = spec.securityContext;
  const containers: V1Container[] = [
    ...(spec.initContainers ?? []),
    ...spec.containers,
    ...((spec.ephemeralContainers ?? []) as V1Container[]),
  ];
  // baseline
  if (spec.hostNetwork || spec.hostPID || spec.hostIPC) out.push('host namespaces');
  if (podSc?.windowsOptions?.hostProcess) out.push('hostProcess');
  for (const v of spec.volumes ?? []) {
    if (v.hostPath) out.push(`hostPath volume ${v.name}`);
    const kind = Object.keys(v).find((k) => k !== 'name');
    if (kind && !RESTRICTED_VOLUMES.includes(kind)) out.push(`restricted volume type ${kind} (${v.name})`);
  }
  for (const s of podSc?.sysctls ?? []) if (!SAFE_SYSCTLS.includes(s.name)) out.push(`sysctl ${s.name}`);
  if (podSc?.appArmorProfile?.type === 'Unconfined') out.push('appArmor Unconfined (pod)');
  checkSeLinux(podSc?.seLinuxOptions, 'pod', out);
  if (podSc?.runAsUser === 0) out.push('runAsUser=0 (pod)');
  if (podSc?.seccompProfile?.type === 'Unconfined') out.push('seccompProfile Unconfined (pod)');
  const podSeccomp = podSc?.seccompProfile?.type;
  for (const c of containers) {
    const sc = c.securityContext;
    const where = `container "${c.name}"`;
    if (sc?.privileged) out.push(`${where}: privileged`);
    if (sc?.windowsOptions?.hostProcess) out.push(`${where}: hostProcess`);
    for (const p of c.ports ?? []) if (p.hostPort) out.push(`${where}: hostPort ${p.hostPort}`);
    for (const cap of sc?.capabilities?.add ?? []) {
      if (!BASELINE_CAPABILITIES.includes(cap)) out.push(`${where}: capability ${cap} (baseline)`);
      if (cap !== 'NET_BIND_SERVICE') out.push(`${where}: adds capability ${cap}`);
    }
    if (sc?.appArmorProfile?.type === 'Unconfined') out.push(`${where}: appArmor Unconfined`);
    checkSeLinux(sc?.seLinuxOptions, where, out);
    if (sc?.procMount && sc.procMount !== 'Default') out.push(`${where}: procMount ${sc.procMount}`);
    // restricted
    if (sc?.allowPrivilegeEscalation !== false) out.push(`${where}: allowPrivilegeEscalation != false`);
    if (sc?.runAsNonRoot === false || (sc?.runAsNonRoot !== true && podSc?.runAsNonRoot !== true))
      out.push(`${where}: runAsNonRoot != true`);
    if (sc?.runAsUser === 0) out.push(`${where}: runAsUser=0`);
    const seccomp = sc?.seccompProfile?.type ?? podSeccomp;
    if (seccomp !== 'RuntimeDefault' && seccomp !== 'Localhost')
      out.push(`${where}: seccompProfile.type must be RuntimeDefault or Localhost`);
    if (!(sc?.capabilities?.drop ?? []).includes('ALL'))
      out.push(`${where}: capabilities.drop must include ALL`);
  }
  return out;
}

function checkSeLinux(
  o: { type?: string; user?: string; role?: string } | undefined,
  where: string,
  out: string[],
) {
  if (!o) return;
  if (!SELINUX_TYPES.includes(o.type ?? '')) out.push(`${where}: seLinuxOptions.type ${o.type}`);
  if (o.user || o.role) out.push(`${where}: seLinuxOptions user/role`);
}

/**
 * What the ResourceQuota admission plugin says about a Pod in a namespace whose quota covers
 * requests and limits of cpu and memory (plugin/pkg/admission/resourcequota: "must specify
 * limits.cpu for: <containers>; ..."), or null when the Pod has them all.
 */
export function quotaRefusal(pod: V1Pod, quotaName = 'compute'): string | null {
  const missing: string[] = [];
  for (const key of ['limits.cpu', 'limits.memory', 'requests.cpu', 'requests.memory']) {
    const [kind, resource] = key.split('.') as ['limits' | 'requests', string];
    const names = (pod.spec?.containers ?? [])
      .filter((c) => c.resources?.[kind]?.[resource] === undefined)
      .map((c) => c.name);
    if (names.length > 0) missing.push(`${key} for: ${names.join(',')}`);
  }
  if (missing.length === 0) return null;
  return `pods "${pod.metadata?.name ?? ''}" is forbidden: failed quota: ${quotaName}: must specify ${missing.join('; ')}`;
}
