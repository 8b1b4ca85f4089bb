import { randomUUID } from 'node:crypto';
import { DynamoDbPauses } from '../../../src/verification/stores/dynamodb-pauses';
import { MemoryPauses } from '../../../src/verification/stores/memory-pauses';
import type { Pause, Pauses } from '../../../src/verification/stores/pauses';
import { useStateTable } from '../../support/dynalite';
import { manualClock } from '../../support/manual-clock';

// The same cases against memory and against DynamoDB (dynalite): a pause closes once, locally and deployed.
const stateTable = useStateTable();
const clock = manualClock();

const stores: Array<[string, () => Pauses]> = [
  ['DynamoDbPauses (dynalite)', () => new DynamoDbPauses({ dynamodb: stateTable().dynamodb, tableName: 'state', clock })],
  ['MemoryPauses', () => new MemoryPauses(clock)],
];

function pauseOf(round = 0): Pause {
  return {
    request_id: randomUUID(),
    round,
    state: 'waiting',
    thread: { team_id: 'T1', channel: 'C1', ts: '1.1' },
    event_id: 'Ev1',
    asker: 'U1',
    agent: 'echo',
    handle: { taskId: 'task-1' },
    question: { id: 'q', text: 'Go?', options: [{ value: 'yes', label: 'Yes' }] },
    expires_at_ms: clock.now() + 60_000,
    received_at: clock.now(),
  };
}

describe.each(stores)('%s', (_name, makeStore) => {
  let store: Pauses;
  beforeEach(() => {
    store = makeStore();
  });

  it('opens a pause once: the same round again keeps the first, a later round replaces it', async () => {
    // Prepare
    const pause = pauseOf();
    // Act
    const first = await store.open(pause, 120);
    const again = await store.open({ ...pause, event_id: 'Ev2' }, 120);
    await store.close(pause.request_id, 0, 'answered', { closed_by: 'click-1' }, 120);
    const next = await store.open({ ...pause, round: 1 }, 120);
    // Assess
    expect(first.event_id).toBe('Ev1');
    expect(again.event_id).toBe('Ev1');
    expect(next).toMatchObject({ round: 1, state: 'waiting' });
    expect(await store.get(pause.request_id)).toMatchObject({ round: 1, state: 'waiting' });
  });

  it('closes a waiting pause once: the first close wins, a second or an old round’s does not', async () => {
    // Prepare
    const pause = pauseOf();
    await store.open(pause, 120);
    // Act
    const stale = await store.close(pause.request_id, 1, 'answered', { closed_by: 'old-button' }, 120);
    const answered = await store.close(pause.request_id, 0, 'answered', { closed_by: 'click-1', answer: { value: 'yes', label: 'Yes', user: 'U1' } }, 120);
    const expired = await store.close(pause.request_id, 0, 'expired', { closed_by: 'expiry' }, 120);
    // Assess
    expect([stale, answered, expired]).toEqual([false, true, false]);
    expect(await store.get(pause.request_id)).toMatchObject({ state: 'answered', closed_by: 'click-1', answer: { value: 'yes', label: 'Yes', user: 'U1' } });
  });

  it('keeps where the question was posted whichever of the post and the close is recorded first', async () => {
    // Prepare
    const pause = pauseOf();
    await store.open(pause, 120);
    // Act
    await store.close(pause.request_id, 0, 'stopped', { closed_by: 'stop' }, 120);
    await store.posted(pause.request_id, 0, '9.9');
    // Assess
    expect(await store.get(pause.request_id)).toMatchObject({ state: 'stopped', message_ts: '9.9' });
  });

  it('forgets a pause once its lifetime is over: it closes no more', async () => {
    // Prepare
    const pause = pauseOf();
    await store.open(pause, 60);
    // Act
    clock.advance(61_000);
    // Assess
    expect(await store.get(pause.request_id)).toBeUndefined();
    expect(await store.close(pause.request_id, 0, 'answered', { closed_by: 'late' }, 60)).toBe(false);
  });
});
