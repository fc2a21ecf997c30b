/**
 * The top of a V8 CPU profile (node --cpu-prof): self time by function and by package, for the lookup
 * bench's profile of the service's request path.
 *
 *   npx tsx bench/cpu-profile-top.ts <file.cpuprofile> [count]
 */
import { readFileSync } from "node:fs";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const [file, countText = "25"] = process.argv.slice(2);
const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const selfMicros = new Map<number, number>();
profile.samples.forEach((id, index) => selfMicros.set(id, (selfMicros.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0)));
const total = [...selfMicros.values()].reduce((sum, micros) => sum + micros, 0);

const where = (url: string) => {
  const inModules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (inModules) return inModules[1];
  if (url.includes("/src/") || url.includes("/dist/src/")) return `service ${url.replace(/^.*\/(dist\/)?src\//, "src/")}`;
  return url.startsWith("node:") ? url : url === "" ? "(native, gc, idle)" : "node internals";
};
const add = (map: Map<string, number>, key: string, micros: number) => map.set(key, (map.get(key) ?? 0) + micros);
const byFunction = new Map<string, number>();
const byPackage = new Map<string, number>();
for (const [id, micros] of selfMicros) {
  const { functionName, url, lineNumber } = (byId.get(id) as ProfileNode).callFrame;
  add(byFunction, `${functionName || "(anonymous)"}  ${where(url)}:${lineNumber + 1}`, micros);
  add(byPackage, where(url).split(" ")[0] === "service" ? "service (src/)" : where(url), micros);
}
const show = (title: string, map: Map<string, number>) => {
  console.log(`${title} (self time, % of ${(total / 1e6).toFixed(1)} s sampled)`);
  for (const [key, micros] of [...map].sort((a, b) => b[1] - a[1]).slice(0, Number(countText))) console.log(`  ${((micros / total) * 100).toFixed(1).padStart(5)} %  ${key}`);
};
show("by package", byPackage);
console.log();
show("by function", byFunction);
