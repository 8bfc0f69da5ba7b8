import type { Socket } from 'node:net';
import { nativeAddon } from './addon.js';
import { descriptorOf } from './socket-descriptor.js';

/**
 * Bytes a morsel body's socket gathers before the reader is woken (`SO_RCVLOWAT`), while at least
 * that much of the body is still to come. On a LAN link a socket is readable after every packet
 * or two: each wake-up is an epoll return, a `read` of a few KB and the JavaScript around it,
 * and on the AMD VM of issue 19 (a PVM guest: context switches are dear) the emulated LAN's
 * reads were CPU-bound. stripe-width, 512 MiB, median of 3 per run, client + donors CPU-s/GiB:
 * W=8 0.729 and 0.689 of the link (22.8, 24.0) with the mark at 1 byte, 0.793 and 0.857 (21.8,
 * 19.7) at 64 KiB; W=12 0.578 (24.4) at 1 byte, 0.589 (24.0) at 64 KiB, 0.623 and 0.633 (21.6,
 * 22.7) at 256 KiB. Linux still wakes the reader early under memory pressure or when the
 * receive window runs low, so a slow sender cannot stall it; on loopback reads are large anyway
 * (no change in read calls).
 */
export const READ_LOW_WATER_BYTES = 256 * 1024;

/** Whether this process can set a socket's low-water mark (Linux, with the native addon). */
export function lowWaterSupported(): boolean {
  return process.platform === 'linux' && nativeAddon() !== undefined;
}

/**
 * Set `socket`'s receive low-water mark to `bytes` (≥ 1); false when it could not be set (no
 * addon, not Linux, no file descriptor yet, or the kernel refused).
 *
 * @example setLowWater(socket, Math.min(READ_LOW_WATER_BYTES, bodyBytesLeft)) // 1 while a head is read
 */
export function setLowWater(socket: Socket, bytes: number): boolean {
  const addon = nativeAddon();
  const fd = descriptorOf(socket);
  if (!addon || fd === undefined) return false;
  return addon.setLowWater(fd, Math.max(1, Math.floor(bytes)));
}

/** `socket`'s low-water mark as the kernel has it; undefined where it cannot be read. */
export function lowWaterOf(socket: Socket): number | undefined {
  const addon = nativeAddon();
  const fd = descriptorOf(socket);
  const value = addon && fd !== undefined ? addon.getLowWater(fd) : -1;
  return value < 0 ? undefined : value;
}
