import { HealthReporter } from '../../src/execution/hosts/health';
import { manualClock } from '../support/manual-clock';

describe('HealthReporter', () => {
  it('moves time_of_last_update only when the status changes', () => {
    const clock = manualClock(1_000_000);
    const health = new HealthReporter(clock);
    expect(health.ping()).toEqual({ status: 'Healthy', time_of_last_update: 1000 });
    clock.advance(5000);
    expect(health.ping().time_of_last_update).toBe(1000);
    health.setBusy(false);
    expect(health.ping().time_of_last_update).toBe(1000);
    health.setBusy(true);
    expect(health.ping()).toEqual({ status: 'HealthyBusy', time_of_last_update: 1005 });
    clock.advance(7000);
    health.setBusy(true);
    expect(health.ping().time_of_last_update).toBe(1005);
    health.setBusy(false);
    expect(health.ping()).toEqual({ status: 'Healthy', time_of_last_update: 1012 });
  });
});
