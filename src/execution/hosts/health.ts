import { systemClock, type Clock } from '../../clock';

/**
 * The AgentCore `/ping` answer. `time_of_last_update` moves only when the status changes:
 * a timestamp that advanced on every ping would keep an idle session alive until maxLifetime.
 */
export type PingStatus = 'Healthy' | 'HealthyBusy';

export class HealthReporter {
  private status: PingStatus = 'Healthy';
  private changedAt: number;

  constructor(private readonly clock: Clock = systemClock) {
    this.changedAt = clock.now();
  }

  setBusy(busy: boolean): void {
    const next: PingStatus = busy ? 'HealthyBusy' : 'Healthy';
    if (next === this.status) return;
    this.status = next;
    this.changedAt = this.clock.now();
  }

  ping(): { status: PingStatus; time_of_last_update: number } {
    return { status: this.status, time_of_last_update: Math.floor(this.changedAt / 1000) };
  }
}
