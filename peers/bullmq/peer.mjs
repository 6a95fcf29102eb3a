// BullMQ, played: `node peer.mjs work` runs one worker on the queue "peers"; `enqueue SECONDS`
// adds the one job (its first run lasts SECONDS, a later one 1 s) and prints its id as JSON;
// `inspect ID` prints BullMQ's own view of the job as JSON; `version` prints the versions.
// The server's URL comes in PEERS_URL (never on the command line, where `ps` would show its
// password); the run log's path in PEERS_RUNLOG. PEERS_LOCK_MS, when set, is both the
// worker's lockDuration and its stalledInterval (BullMQ's defaults are 30 s for each).
import { appendFileSync, readFileSync } from 'node:fs';
import { Job, Queue, Worker } from 'bullmq';

const QUEUE = 'peers';
const MAX_STALLED = 1;

function connection(name) {
  const url = new URL(process.env.PEERS_URL);
  const options = { host: url.hostname, port: Number(url.port) };
  if (url.password) options.password = decodeURIComponent(url.password);
  if (name) options.connectionName = name;
  return options;
}

// One line of the run log; whether the job had started before (in any worker).
function note(job, event) {
  const before = readFileSync(process.env.PEERS_RUNLOG, 'utf8').split('\n').some((line) => {
    try {
      const entry = JSON.parse(line);
      return entry.job === job && entry.event === 'start';
    } catch {
      return false;
    }
  });
  const line = JSON.stringify({ job, pid: process.pid, event, t: Date.now() / 1000 });
  appendFileSync(process.env.PEERS_RUNLOG, line + '\n');
  return before;
}

async function work() {
  const options = { connection: connection(), maxStalledCount: MAX_STALLED };
  if (process.env.PEERS_LOCK_MS) {
    options.lockDuration = Number(process.env.PEERS_LOCK_MS);
    options.stalledInterval = Number(process.env.PEERS_LOCK_MS);
  }
  const worker = new Worker(QUEUE, async (job) => {
    const again = note(job.id, 'start');
    const ms = again ? 1000 : job.data.first * 1000;
    await new Promise((done) => setTimeout(done, ms));
    note(job.id, 'end');
    return 'done';
  }, options);
  // Logged, not thrown: a worker's connection errors are what the play is about.
  worker.on('error', (err) => console.error(new Date().toISOString(), 'error', err.message));
  worker.on('stalled', (id) => console.log(new Date().toISOString(), 'stalled', id));
  worker.on('failed', (job, err) => console.log(new Date().toISOString(), 'failed', job?.id,
    err.message));
  worker.on('completed', (job) => console.log(new Date().toISOString(), 'completed', job.id));
  const stop = async () => { await worker.close(); process.exit(0); };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

async function enqueue(first) {
  const queue = new Queue(QUEUE, { connection: connection('peers-inspect') });
  const job = await queue.add('job', { first: Number(first) }, { attempts: 1 });
  console.log(JSON.stringify({ id: job.id }));
  await queue.close();
}

async function inspect(id) {
  const queue = new Queue(QUEUE, { connection: connection('peers-inspect') });
  try {
    const job = await Job.fromId(queue, id);
    if (!job) {
      console.log(JSON.stringify({ state: 'missing' }));
      return;
    }
    console.log(JSON.stringify({
      state: await job.getState(),
      stalledCounter: job.stalledCounter ?? 0,
      attemptsMade: job.attemptsMade,
      attemptsStarted: job.attemptsStarted,
      failedReason: job.failedReason ?? null,
    }));
  } finally {
    await queue.close();
  }
}

function version() {
  const lock = JSON.parse(readFileSync(new URL('./node_modules/.package-lock.json',
    import.meta.url)));
  const of = (name) => lock.packages[`node_modules/${name}`].version;
  console.log(JSON.stringify({ bullmq: of('bullmq'), ioredis: of('ioredis'),
    node: process.versions.node }));
}

const [command, arg] = process.argv.slice(2);
const commands = { work, enqueue, inspect, version };
if (!commands[command]) {
  console.error(`usage: node peer.mjs ${Object.keys(commands).join('|')} [arg]`);
  process.exit(2);
}
await commands[command](arg);
if (command !== 'work') process.exit(0);
