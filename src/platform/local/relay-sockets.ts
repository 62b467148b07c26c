// What every userspace relay on the embedded runtime does with its two sockets — the Service's
// proxy (service-proxy.ts) and the delay between an ingress and the Pods (delay-relay.ts): a
// reset passed on as a reset, and each side's close ending the other.
import type net from 'node:net';

/**
 * Passes a reset on. libuv refuses to reset a socket whose FIN is already being sent
 * (uv_tcp_close_reset during uv_shutdown), and Node then never closes its handle: such a
 * socket — already ended by the other side's orderly close — is simply destroyed.
 */
export function reset(socket: net.Socket): void {
  if (socket.destroyed) return;
  if (socket.writableEnded) socket.destroy();
  else socket.resetAndDestroy();
}

/**
 * Ties the two sockets' ends: the backend gone before its orderly end takes the client with it;
 * the client gone takes the backend. Both leave `open` as they close.
 */
export function tieCloses(
  client: net.Socket,
  backend: net.Socket,
  open: Set<net.Socket>,
  onClientClosed: () => void = () => undefined,
): void {
  backend.on('close', () => {
    open.delete(backend);
    if (!client.destroyed && client.writableEnded === false && backend.readableEnded === false)
      client.destroy();
  });
  client.on('close', () => {
    open.delete(client);
    onClientClosed();
    if (!backend.destroyed) backend.destroy();
  });
}
