/**
 * Reads a V8 CPU profile (`node --cpu-prof`) and says which share of the busy samples ran inside
 * given code: a sample counts for a marker when any frame of its stack matches, so shares overlap
 * (a log line written inside executeTask counts for both) and need not add up to 100 %.
 *
 * Busy is every sample but idle ones. Garbage collection and `(program)` (native code with no
 * JavaScript on the stack: the event loop, syscalls outside a JS call) are busy too: they are CPU
 * the process spent, and allocation shows up nowhere else. Samples whose stack matches `exclude`
 * (module loading at start-up, say) are left out altogether, so a profile of a server under load
 * describes the load, not the start.
 */
export type CpuProfile = {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string }; children?: number[] }>;
  samples: number[];
  timeDeltas: number[];
};

export type Frame = { functionName: string; url: string };

/**
 * A sample counts for a marker when a frame of its stack `matches`, or, with `stack`, when the
 * whole stack (leaf first) says so: what a function does itself, not what it calls.
 */
export type Marker = { label: string } & ({ matches: (frame: Frame) => boolean } | { stack: (frames: readonly Frame[]) => boolean });

export type Attribution = { busyMs: number; excludedMs: number; shares: Array<{ label: string; share: number }> };

const NOT_BUSY = new Set(['(idle)']);

/** Frames of node's module loader: samples under them are start-up, not load. */
export const STARTUP_FRAME = (frame: Frame): boolean =>
  /^(?:Module\._load|Module\._compile|executeUserEntryPoint|compileForInternalLoader|requireBuiltin)$/.test(frame.functionName);

export function attribute(profile: CpuProfile, markers: readonly Marker[], options: { exclude?: (frame: Frame) => boolean } = {}): Attribution {
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const timeOf = new Map<number, number>();
  profile.samples.forEach((id, index) => timeOf.set(id, (timeOf.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0)));

  let busy = 0;
  let excluded = 0;
  const inside = markers.map(() => 0);
  for (const [id, micros] of timeOf) {
    const leaf = byId.get(id);
    if (!leaf || NOT_BUSY.has(leaf.callFrame.functionName)) continue;
    const stack: Frame[] = [];
    for (let current: number | undefined = id; current !== undefined; current = parent.get(current)) {
      const frame = byId.get(current)?.callFrame;
      if (!frame) break;
      stack.push(frame);
    }
    if (options.exclude && stack.some(options.exclude)) {
      excluded += micros;
      continue;
    }
    busy += micros;
    markers.forEach((marker, index) => {
      if ('stack' in marker ? marker.stack(stack) : stack.some(marker.matches)) inside[index]! += micros;
    });
  }
  return { busyMs: busy / 1000, excludedMs: excluded / 1000, shares: markers.map((marker, index) => ({ label: marker.label, share: busy ? inside[index]! / busy : 0 })) };
}
