import { CASES } from '../../src/conformance/cases';
import { LEVELS, checkedLevels, levelsOfCard, parseLevelFlag, planLevels } from '../../src/conformance/levels';
import { selectCases } from '../../src/conformance/runner';
import { agentCard } from '../../src/execution/agent-card';

const WHERE = 'http://127.0.0.1:8080/.well-known/agent-card.json';

describe('conformance levels', () => {
  it('every case has a level, every level has a case, and the cases come level by level, core first', () => {
    // Assess
    expect(new Set(CASES.map((c) => c.level))).toEqual(new Set(LEVELS));
    const order = CASES.map((c) => LEVELS.indexOf(c.level));
    expect(order).toEqual([...order].sort((a, b) => a - b));
  });

  it("the reference runtime's agent card declares every level the kit knows", () => {
    // Act
    const card = levelsOfCard(JSON.stringify(agentCard({ name: 'zone', version: '1', executor: 'echo' })), WHERE);
    // Assess
    expect(card).toEqual({ levels: [...LEVELS], unknown: [], where: WHERE });
  });

  it.each([
    [undefined, `the agent card at ${WHERE} is empty`],
    ['<html>', `the agent card at ${WHERE} is not JSON`],
    ['null', `the agent card at ${WHERE} declares no zone_contract.levels`],
    ['{"capabilities": {"streaming": true}}', `the agent card at ${WHERE} declares no zone_contract.levels`],
    ['{"zone_contract": {"levels": "core"}}', `the agent card at ${WHERE} declares no zone_contract.levels`],
  ])('a card %j declares nothing beyond core', (body, why) => {
    // Act
    const plan = planLevels(levelsOfCard(body, WHERE));
    // Assess
    expect(plan.card).toBe(why);
    expect(checkedLevels(plan)).toEqual(['core']);
  });

  it('--level adds to what the card declares (never takes it back); all is every level', () => {
    // Prepare
    const card = levelsOfCard('{"zone_contract": {"levels": ["cancel", 7, "telepathy"]}}', WHERE);
    // Act
    const plan = planLevels(card, ['streaming']);
    // Assess
    expect(plan.levels).toEqual([
      { level: 'core', declaredBy: 'always' },
      { level: 'thread-context' },
      { level: 'attachments' },
      { level: 'context' },
      { level: 'streaming', declaredBy: '--level' },
      { level: 'cancel', declaredBy: 'agent card' },
      { level: 'usage' },
      { level: 'files' },
      { level: 'steps' },
      { level: 'asker' },
      { level: 'questions' },
    ]);
    expect(plan.card).toBe(`the agent card at ${WHERE} declares cancel (ignored, unknown to this kit: telepathy)`);
    expect(checkedLevels(planLevels({ none: 'no card' }, ['all']))).toEqual([...LEVELS]);
  });

  it('--level takes comma-separated and repeated names, and names the first it does not know', () => {
    // Assess
    expect(parseLevelFlag(['thread-context, cancel', 'streaming'])).toEqual({ levels: ['thread-context', 'cancel', 'streaming'] });
    expect(parseLevelFlag(['all'])).toEqual({ levels: ['all'] });
    expect(parseLevelFlag(['cancel,threads'])).toEqual({ unknown: 'threads' });
  });

  it('only the cases of the checked levels are selected, then narrowed by --only', () => {
    // Prepare
    const plan = planLevels({ none: 'no card' }, ['cancel']);
    // Act
    const cases = selectCases({ plan });
    const narrowed = selectCases({ plan, only: ['cancel_task.', 'error.invalid-params.messages'] });
    // Assess
    expect(new Set(cases.map((c) => c.level))).toEqual(new Set(['core', 'cancel']));
    expect(narrowed.map((c) => c.id)).toEqual(['cancel_task.accepted', 'cancel_task.unknown']);
  });
});
