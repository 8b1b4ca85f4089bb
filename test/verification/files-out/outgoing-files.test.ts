import type { AgentFile } from '../../../src/contract';
import { DynamoDbOutgoingFiles } from '../../../src/verification/files-out/dynamodb-outgoing-files';
import { MemoryOutgoingFiles } from '../../../src/verification/files-out/memory-outgoing-files';
import type { OutgoingFiles } from '../../../src/verification/files-out/outgoing-files';
import { useStateTable } from '../../support/dynalite';
import { manualClock } from '../../support/manual-clock';

/** An answer's files between the settlement and slack-poster, in memory and in DynamoDB (dynalite). */
const stateTable = useStateTable();
const clock = manualClock();

// `peer`: another function's handle on the same store (another instance over the table; the same instance in memory).
const dynamo = () => new DynamoDbOutgoingFiles({ dynamodb: stateTable().dynamodb, tableName: 'state', clock });
describe.each<[string, () => OutgoingFiles, (store: OutgoingFiles) => OutgoingFiles]>([
  ['MemoryOutgoingFiles', () => new MemoryOutgoingFiles(clock), (store) => store],
  ['DynamoDbOutgoingFiles (dynalite)', dynamo, () => dynamo()],
])('%s', (name, make, peer) => {
  it('gives back the files put, in order — a 5 MB file too, past the 400 KB a DynamoDB item holds', async () => {
    // Prepare
    const big = Buffer.alloc(5 * 1024 * 1024, 7).toString('base64');
    const files: AgentFile[] = [
      { name: 'big.bin', media_type: 'application/octet-stream', data: big },
      { name: 'chart.png', media_type: 'image/png', url: 'https://files.example.com/chart.png' },
    ];
    const store = make();
    // Act
    await store.put(`${name}-req-1`, files, 3600);
    await store.put(`${name}-req-1`, files, 3600);
    const read = await peer(store).get(`${name}-req-1`);
    // Assess (compared as JSON: a failing deep diff of 7 MB of base64 would drown the report)
    expect(read.map((file) => file.name)).toEqual(['big.bin', 'chart.png']);
    expect(JSON.stringify(read) === JSON.stringify(files)).toBe(true);
  });

  it('gives nothing for a request without files, or once they expired', async () => {
    const store = make();
    await store.put(`${name}-req-2`, [{ name: 'a.txt', media_type: 'text/plain', data: 'YQ==' }], 60);
    expect(await store.get(`${name}-none`)).toEqual([]);
    clock.advance(61_000);
    expect(await store.get(`${name}-req-2`)).toEqual([]);
  });
});
