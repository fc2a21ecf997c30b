/** A real, tiny filesystem (tmpfs, needs root as in CI) to run out of disk space on purpose. */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Mounts a tmpfs of `kilobytes` on a fresh folder. */
export function mountTinyFilesystem(kilobytes: number): { mountPoint: string; unmount: () => void } {
  const mountPoint = mkdtempSync(join(tmpdir(), "tinyfs-"));
  execFileSync("mount", ["-t", "tmpfs", "-o", `size=${kilobytes}k,mode=0777`, "tmpfs", mountPoint]);
  return {
    mountPoint,
    unmount() {
      execFileSync("umount", ["-l", mountPoint]);
      rmSync(mountPoint, { recursive: true, force: true });
    },
  };
}

/** Writes filler files until the filesystem has no byte left. */
export function fillFilesystem(mountPoint: string): void {
  for (let index = 0, size = 64 * 1024; size >= 1; index++) {
    try {
      writeFileSync(join(mountPoint, `filler-${index}`), Buffer.alloc(size));
    } catch {
      size = Math.floor(size / 2);
    }
  }
}
