import type { Socket } from 'node:net';

/**
 * Ends a connection as a crashed server would: with a reset (RST), not a polite FIN.
 *
 * Except when this side has already called `end()`: libuv refuses to reset a socket whose FIN is
 * still being sent (EINVAL), and Node then marks the handle closing without closing it, so the
 * socket never emits 'close', its descriptor stays open, and a worker thread that holds it never
 * finishes terminating. Such a socket is already closing; destroying it is all that is left to do.
 */
export function resetSocket(socket: Socket): void {
  if (socket.destroyed) return;
  if (socket.writableEnded) socket.destroy();
  else socket.resetAndDestroy();
}
