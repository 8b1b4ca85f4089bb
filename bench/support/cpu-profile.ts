/**
 * Reads a V8 CPU profile (`node --cpu-prof`) and says which share of the busy samples ran inside
 * given code: a sample counts for a marker when any frame of its stack matches, so shares overlap
 * (a log line written inside executeTask counts for both) and need not add up to 100 %.
 */
export type CpuProfile = {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string }; children?: number[] }>;
  samples: number[];
  timeDeltas: number[];
};

export type Marker = { label: string; matches: (frame: { functionName: string; url: string }) => boolean };

export type Attribution = { busyMs: number; shares: Array<{ label: string; share: number }> };

const NOT_BUSY = new Set(['(idle)', '(program)', '(garbage collector)']);

export function attribute(profile: CpuProfile, markers: readonly Marker[]): Attribution {
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const timeOf = new Map<number, number>();
  profile.samples.forEach((id, index) => timeOf.set(id, (timeOf.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0)));

  let busy = 0;
  const inside = markers.map(() => 0);
  for (const [id, micros] of timeOf) {
    const leaf = byId.get(id);
    if (!leaf || NOT_BUSY.has(leaf.callFrame.functionName)) continue;
    busy += micros;
    const hit = markers.map(() => false);
    for (let current: number | undefined = id; current !== undefined; current = parent.get(current)) {
      const frame = byId.get(current)?.callFrame;
      if (!frame) break;
      markers.forEach((marker, index) => {
        if (!hit[index] && marker.matches(frame)) hit[index] = true;
      });
    }
    hit.forEach((yes, index) => {
      if (yes) inside[index]! += micros;
    });
  }
  return { busyMs: busy / 1000, shares: markers.map((marker, index) => ({ label: marker.label, share: busy ? inside[index]! / busy : 0 })) };
}
