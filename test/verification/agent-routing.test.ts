import { agentRoutesFromEnv, routingProblems } from '../../src/protocols/agent-routes';
import { agentSettingsFrom } from '../../src/protocols/agent-config';
import { matchPrefix, routeMessage } from '../../src/verification/routing/agent-routing';

const routes = agentRoutesFromEnv({
  EXECUTION_AGENTS: JSON.stringify([
    { name: 'general', protocol: 'execute-task', transport: 'https', url: 'https://general.example/invocations', default: true },
    { name: 'legal', protocol: 'a2a', transport: 'https', url: 'https://legal.example/', channels: ['CLEGAL'], prefix: 'Legal' },
    { name: 'sre', protocol: 'simple-a2a', transport: 'https', url: 'https://sre.example/', channels: ['CINCIDENTS', 'COPS'], prefix: 'sre' },
  ]),
});

describe('routeMessage', () => {
  it('sends a message in a routed channel to its agent, and one elsewhere to the default', () => {
    expect(routeMessage(routes, { channel: 'CLEGAL', text: 'is this clause ok?' })).toEqual({ agent: 'legal', text: 'is this clause ok?', by: 'channel' });
    expect(routeMessage(routes, { channel: 'COPS', text: 'disk full' })).toEqual({ agent: 'sre', text: 'disk full', by: 'channel' });
    expect(routeMessage(routes, { channel: 'CRANDOM', text: 'hello' })).toEqual({ agent: 'general', text: 'hello', by: 'default' });
  });

  it('sends a prefixed message to the named agent wherever it is, without the prefix; case and spaces around the colon do not count', () => {
    expect(routeMessage(routes, { channel: 'CRANDOM', text: 'legal: may we ship this?' })).toEqual({ agent: 'legal', text: 'may we ship this?', by: 'prefix' });
    expect(routeMessage(routes, { channel: 'CLEGAL', text: '  SRE :  why is it slow' })).toEqual({ agent: 'sre', text: 'why is it slow', by: 'prefix' });
    expect(matchPrefix(routes, 'Legal:\nline two')).toEqual({ agent: 'legal', text: 'line two' });
  });

  it('leaves a word with a colon that no agent claims, or a prefix later in the text, where it is', () => {
    expect(routeMessage(routes, { channel: 'CRANDOM', text: 'Note: legal: later' })).toEqual({ agent: 'general', text: 'Note: legal: later', by: 'default' });
    expect(matchPrefix(routes, 'legalese: nope')).toBeUndefined();
    expect(matchPrefix(routes, 'see https://x.example')).toBeUndefined();
  });

  it("keeps a thread with the agent of its last task, unless a prefix names another; a removed agent's thread is routed afresh", () => {
    expect(routeMessage(routes, { channel: 'CRANDOM', text: 'and then?', threadAgent: 'sre' })).toEqual({ agent: 'sre', text: 'and then?', by: 'thread' });
    expect(routeMessage(routes, { channel: 'CLEGAL', text: 'and then?', threadAgent: 'general' })).toEqual({ agent: 'general', text: 'and then?', by: 'thread' });
    expect(routeMessage(routes, { channel: 'CRANDOM', text: 'legal: and this?', threadAgent: 'sre' })).toEqual({ agent: 'legal', text: 'and this?', by: 'prefix' });
    expect(routeMessage(routes, { channel: 'CLEGAL', text: 'and then?', threadAgent: 'gone' })).toEqual({ agent: 'legal', text: 'and then?', by: 'channel' });
  });

  it('with no EXECUTION_AGENTS, everything goes to the one agent', () => {
    const single = agentRoutesFromEnv({});
    expect(routeMessage(single, { channel: 'CLEGAL', text: 'legal: hi' })).toEqual({ agent: 'default', text: 'legal: hi', by: 'default' });
  });
});

describe('routing rules are refused with their place', () => {
  const entry = (name: string, extra: Record<string, unknown> = {}) => ({ name, protocol: 'execute-task', transport: 'https', url: `https://${name}.example/invocations`, ...extra });
  const refusals = (list: unknown[]) => {
    const json = JSON.stringify(list);
    // slack-events reads only the routing half; the invoker parses it whole: both refuse alike.
    const light = (() => { try { agentRoutesFromEnv({ EXECUTION_AGENTS: json }); return ''; } catch (error) { return (error as Error).message; } })();
    const full = (() => { try { agentSettingsFrom({ env: { EXECUTION_AGENTS: json } }); return ''; } catch (error) { return (error as Error).message; } })();
    return { light, full };
  };

  it.each([
    ['a channel claimed by two agents', [entry('a', { default: true, channels: ['C1'] }), entry('b', { channels: ['C2', 'C1'] })], /EXECUTION_AGENTS\[1\]\.channels: channel C1 is claimed by agents "a" and "b"/],
    ['two defaults', [entry('a', { default: true }), entry('b', { default: true })], /exactly one agent must have "default": true \(found 2: "a", "b"\)/],
    ['no default among several', [entry('a'), entry('b')], /exactly one agent must have "default": true \(found none\)/],
    ['an empty prefix', [entry('a', { default: true, prefix: '' })], /EXECUTION_AGENTS\[0\]\.prefix: prefix must be one word/],
    ['a prefix with its colon', [entry('a', { default: true, prefix: 'legal:' })], /EXECUTION_AGENTS\[0\]\.prefix: prefix must be one word/],
    ['a prefix used twice, whatever its case', [entry('a', { default: true, prefix: 'Legal' }), entry('b', { prefix: 'legal' })], /EXECUTION_AGENTS\[1\]\.prefix: prefix "legal:" is used by agents "a" and "b"/],
    ['a channel that is no channel id', [entry('a', { default: true, channels: ['#legal'] })], /EXECUTION_AGENTS\[0\]\.channels: "#legal" is not a Slack channel id/],
    ['a name used twice', [entry('a', { default: true }), entry('a')], /EXECUTION_AGENTS\[1\]\.name: agent name "a" is used twice/],
  ])('%s', (_what, list, message) => {
    const { light, full } = refusals(list);
    expect(light).toMatch(message);
    expect(full).toMatch(message);
  });

  it('names every problem at once', () => {
    const problems = routingProblems([entry('a', { default: true, channels: ['C1'], prefix: 'x' }), entry('b', { default: true, channels: ['C1'], prefix: 'X' })]);
    expect(problems.map((problem) => problem.field ?? 'list')).toEqual(['channels', 'prefix', 'list']);
  });

  it('a good configuration parses, with its display name and icon', () => {
    const settings = agentSettingsFrom({ env: { EXECUTION_AGENTS: JSON.stringify([entry('a', { default: true }), entry('b', { channels: ['C1', 'C1'], prefix: 'Bee', displayName: 'Bee Agent', icon: ':bee:' })]) } });
    expect(settings.agents[1]).toMatchObject({ name: 'b', channels: ['C1'], prefix: 'bee', persona: { username: 'Bee Agent', iconEmoji: ':bee:' } });
    expect(() => agentSettingsFrom({ env: { EXECUTION_AGENTS: JSON.stringify([entry('a', { icon: 'bee' })]) } })).toThrow(/EXECUTION_AGENTS\[0\]\.icon: icon is an emoji code such as :scales:/);
  });
});
