/**
 * The start-up checkpoint written (its layout, and why, are `checkpoint.ts`): slots copied into
 * blocks (`checkpoint-block.ts`), the blocks written to a temp file, then the footer and the
 * preamble, fsynced and renamed into place. `writeCheckpoint` does it all in one synchronous step
 * (start-up, close); a compaction drives a `CheckpointWriter` a slice at a time
 * (`compaction-checkpoint.ts`).
 */
import type { WebhookImage } from './webhook-table.ts';
import type { DomainRedirects } from '../domain-store.ts';
import { endianness } from 'node:os';
import { dirname } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Block, BLOCK_SLOTS, type BlockInfo } from './checkpoint-block.ts';
import { chainsSection, type ChainsInfo, type KeydirChains } from './checkpoint-chains.ts';
import { CHECKPOINT_VERSION, checkpointPath, identity, MAGIC, PREAMBLE, type Covered, type Footer } from './checkpoint.ts';
import { crc32 } from './crc32.ts';
import { TEMP_SUFFIX } from './files.ts';
import { FORMAT_VERSION } from './format.ts';
import type { StoreFs } from './fs.ts';
import type { Keydir } from './keydir.ts';
import type { KeyRecord } from '../key-store.ts';

/**
 * A checkpoint being written to its temp file: slots copied in (`add`), blocks written out
 * (`flush`, or `flushSync` where nothing may change the keydir between the first copy and the
 * last), then the footer and preamble, fsynced (`finish`), and `install`ed by a rename. Any failure
 * before the rename leaves the checkpoint there was as it was (`abandon` removes the temp file).
 */
export class CheckpointWriter {
  private readonly block = new Block();
  private readonly blocks: BlockInfo[] = [];
  /** Where the next block goes. */
  private at = PREAMBLE;
  private used = 0;
  private eventSlots = 0;
  private eventWords = 0;
  private readonly started = performance.now();
  private fd: number | undefined;
  private readonly late: number[] = [];
  private referrers: [number, string][] = [];
  private keys: KeyRecord[] = [];
  private domains: [string, DomainRedirects][] = [];
  private orphans: unknown[][] = [];
  private webhooks: WebhookImage | undefined;
  private chains: ChainsInfo | undefined;

  /**
   * A new temp file beside `logPath`. `nextSeqs`: see `KeydirImage.copySlot`. `lateFrom`: the keydir's
   * first slot made after the copying began (a compaction's: such a slot may repeat the code of one
   * copied before, which was then deleted or replaced).
   */
  constructor(
    private readonly fs: StoreFs,
    private readonly logPath: string,
    private readonly seed: number,
    private readonly nextSeqs: boolean,
    private readonly lateFrom = Number.MAX_SAFE_INTEGER,
  ) {
    this.fd = fs.create(this.temp);
  }

  /**
   * The referrer hosts the log it covers names, and the stored API keys, domains' redirects and
   * orphan visits it leaves (by the end of those bytes).
   */
  names(referrers: [number, string][], keys: readonly KeyRecord[], domains: [string, DomainRedirects][], orphans: unknown[][], webhooks?: WebhookImage): void {
    this.webhooks = webhooks;
    this.referrers = referrers;
    this.keys = [...keys];
    this.domains = domains;
    this.orphans = orphans;
  }

  private get temp(): string {
    return checkpointPath(this.logPath) + TEMP_SUFFIX;
  }

  /** Slots copied and not yet written. */
  get pending(): number {
    return this.block.slots;
  }

  /** Copies the live slot `s` of `records` (which must have the seed the writer was made with). */
  add(records: Keydir, s: number): void {
    records.copySlot(s, this.block, this.nextSeqs);
    if (s >= this.lateFrom) this.late.push(this.block.base + this.block.slots - 1);
  }

  private take(): { bytes: Buffer; at: number } | undefined {
    if (this.block.slots === 0) return undefined;
    const { bytes, info } = this.block.take();
    this.blocks.push(info);
    this.used += info[1];
    this.eventSlots += info[2];
    this.eventWords += info[3];
    const at = this.at;
    this.at += bytes.length;
    return { bytes, at };
  }

  flushSync(): void {
    const block = this.take();
    if (block) this.fs.writeSync(this.fd!, block.bytes, block.at);
  }

  /** Writes the keydir's indexes after the blocks (`checkpoint-chains.ts`): every slot written, none to come. */
  chainsSync(chains: KeydirChains): void {
    this.flushSync();
    const { parts, info } = chainsSection(chains, this.block.base);
    for (const part of parts) {
      this.fs.writeSync(this.fd!, part, this.at);
      this.at += part.length;
    }
    this.chains = info;
  }

  async flush(): Promise<void> {
    const block = this.take();
    if (block) await this.fs.write(this.fd!, block.bytes, block.at);
  }

  /** The footer and the preamble that points at it, for the log `logFd` up to `covered`. */
  private tail(logFd: number, covered: Covered): { footer: Buffer; preamble: Buffer } {
    const log = identity(this.fs, logFd, covered.offset);
    const footer: Footer = {
      endian: endianness(),
      log: { ...covered, format: FORMAT_VERSION, id: log.id, head: log.head, tail: log.tail },
      keydir: { seed: this.seed, slots: this.block.base, used: this.used, eventSlots: this.eventSlots, eventWords: this.eventWords },
      labels: this.block.labelled,
      referrers: this.referrers,
      keys: this.keys,
      domains: this.domains,
      orphans: this.orphans,
      ...(this.webhooks === undefined ? {} : { webhooks: this.webhooks }),
      late: this.late,
      blocks: this.blocks,
      ...(this.chains === undefined ? {} : { chains: this.chains }),
    };
    const json = Buffer.from(JSON.stringify(footer), 'utf8');
    const preamble = Buffer.alloc(PREAMBLE);
    MAGIC.copy(preamble, 0);
    preamble.writeUInt32LE(CHECKPOINT_VERSION, MAGIC.length);
    preamble.writeUInt32LE(json.length, MAGIC.length + 4);
    preamble.writeUInt32LE(crc32(json), MAGIC.length + 8);
    preamble.writeDoubleLE(this.at, MAGIC.length + 16);
    return { footer: json, preamble };
  }

  /** Writes the rest (`flushSync`), the footer and the preamble, and fsyncs and closes the file. */
  finishSync(logFd: number, covered: Covered): void {
    this.flushSync();
    const { footer, preamble } = this.tail(logFd, covered);
    this.fs.writeSync(this.fd!, footer, this.at);
    this.fs.writeSync(this.fd!, preamble, 0);
    this.fs.fsyncSync(this.fd!);
    const fd = this.fd!;
    this.fd = undefined;
    this.fs.closeSync(fd);
  }

  /** `finishSync` off the event loop. */
  async finish(logFd: number, covered: Covered): Promise<void> {
    await this.flush();
    const { footer, preamble } = this.tail(logFd, covered);
    await this.fs.write(this.fd!, footer, this.at);
    await this.fs.write(this.fd!, preamble, 0);
    await this.fs.fsync(this.fd!);
    const fd = this.fd!;
    this.fd = undefined;
    await this.fs.close(fd);
  }

  /** Renames the finished checkpoint into place; the caller fsyncs the directory. */
  install(): { bytes: number; links: number; ms: number } {
    this.fs.rename(this.temp, checkpointPath(this.logPath));
    return { bytes: this.at, links: this.block.base, ms: Math.round(performance.now() - this.started) };
  }

  /** Gives the checkpoint up: its temp file is removed (or, if that fails too, by the next start). */
  abandon(): void {
    if (this.fd !== undefined) {
      try {
        this.fs.closeSync(this.fd);
      } catch {
        // The failure that led here is the one to report.
      }
      this.fd = undefined;
    }
    try {
      this.fs.remove(this.temp);
    } catch {
      // Removed at the next start.
    }
  }
}

/**
 * Writes the checkpoint of `records`, which must be exactly what the log `logFd` replays to up to
 * `covered.offset`: to a temp file, fsynced, renamed into place, its directory fsynced. Synchronous
 * from the first byte to the rename. Throws (the temp file removed, any checkpoint there was left
 * as it was) when a step fails.
 */
export function writeCheckpoint(fs: StoreFs, logPath: string, logFd: number, records: Keydir, covered: Covered): { bytes: number; ms: number } {
  const writer = new CheckpointWriter(fs, logPath, records.hashSeed, true);
  writer.names(
    [...records.events.referrers.inLog()],
    records.accessKeys.list(),
    records.domains.entries(),
    records.orphans.rows(),
    records.webhooks.size > 0 ? records.webhooks.image() : undefined,
  );
  try {
    for (const s of records.slotsOldestFirst()) {
      writer.add(records, s);
      if (writer.pending === BLOCK_SLOTS) writer.flushSync();
    }
    const chains = records.chainsImage();
    if (chains !== undefined) writer.chainsSync(chains);
    writer.finishSync(logFd, covered);
  } catch (err) {
    writer.abandon();
    throw err;
  }
  const { bytes, ms } = writer.install();
  fs.syncDir(dirname(logPath));
  return { bytes, ms };
}
