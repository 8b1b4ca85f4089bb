import type { Step } from '../../src/contract';
import { ToolSteps, stepsOfContent } from '../../src/execution/executors/tool-steps';

describe('Bedrock tool use as steps (docs/contract.md, "Steps")', () => {
  it('a streamed tool-use block is a step in progress until its block stops, then complete; text blocks are no step', () => {
    const shown: Step[] = [];
    const steps = new ToolSteps((step) => shown.push(step));
    steps.take({ contentBlockStart: { contentBlockIndex: 0, start: { toolUse: { toolUseId: 'tu-1', name: 'search_tickets', type: undefined } } } } as never);
    steps.take({ contentBlockDelta: { contentBlockIndex: 0, delta: { toolUse: { input: '{"q":' } } } } as never);
    steps.take({ contentBlockStop: { contentBlockIndex: 0 } } as never);
    steps.take({ contentBlockDelta: { contentBlockIndex: 1, delta: { text: 'hello' } } } as never);
    steps.take({ contentBlockStop: { contentBlockIndex: 1 } } as never);
    expect(shown).toEqual([
      { id: 'tu-1', title: 'Using search_tickets', status: 'in_progress' },
      { id: 'tu-1', title: 'Using search_tickets', status: 'complete' },
    ]);
  });

  it('a whole Converse answer: each toolUse block a complete step', () => {
    expect(stepsOfContent([{ text: 'let me look' }, { toolUse: { toolUseId: 'tu-2', name: 'get_weather', input: {} } }] as never)).toEqual([{ id: 'tu-2', title: 'Using get_weather', status: 'complete' }]);
  });
});
