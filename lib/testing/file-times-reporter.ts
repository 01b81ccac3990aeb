import type { Reporter, TestModule } from "vitest/node";
import { formatFileTimes, type FileTime } from "./file-times";

/**
 * Says at the end of a Vitest run which files took longest, and in which
 * lane (vitest.config.mts): the figures docs/testing.md keeps, and the
 * first place to look when a run grows slower.
 *
 * A file's time is the wall time from when its lane queued it to when it
 * ended: its import, its setup files and its hooks (where servers start)
 * included, which Vitest's own per-file duration leaves out.
 * FILE_TIMES_SHOWN=all lists every file.
 */
export default class FileTimesReporter implements Reporter {
  private readonly queuedAt = new Map<string, number>();
  private readonly times: FileTime[] = [];

  onTestModuleQueued(testModule: TestModule): void {
    this.queuedAt.set(this.keyOf(testModule), performance.now());
  }

  onTestModuleEnd(testModule: TestModule): void {
    const queuedAt = this.queuedAt.get(this.keyOf(testModule));
    if (queuedAt === undefined) return;
    this.times.push({
      file: testModule.relativeModuleId,
      lane: testModule.project.name,
      seconds: (performance.now() - queuedAt) / 1000,
    });
  }

  onTestRunEnd(): void {
    const shown = process.env.FILE_TIMES_SHOWN === "all" ? Infinity : 12;
    console.log(`\n${formatFileTimes(this.times, shown)}`);
  }

  private keyOf(testModule: TestModule): string {
    return `${testModule.project.name}:${testModule.moduleId}`;
  }
}
