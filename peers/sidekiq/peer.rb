# Sidekiq, played, with Debian's ruby-sidekiq (basic fetch: BRPOP takes the job out of the
# queue, and nothing holds it while it runs).
#
#   sidekiq -r ./peer.rb -q peers   one Sidekiq process on the queue "peers" (the worker)
#   ruby peer.rb enqueue SECONDS    adds the one job (its first run lasts SECONDS, a later
#                                   one 1 s); prints its jid as JSON
#   ruby peer.rb inspect JID        where Sidekiq holds the job, as JSON
#   ruby peer.rb version            the versions, as JSON
#
# The server's URL comes in REDIS_URL (never on the command line, where `ps` would show its
# password), which Sidekiq reads itself; the run log's path in PEERS_RUNLOG.
require "json"
require "sidekiq"

# Sidekiq 6.4 calls redis-rb 4.8 in ways 4.8 warns about on every fetch: noise in the logs.
Redis.silence_deprecations = true if Redis.respond_to?(:silence_deprecations=)

QUEUE = "peers"

# The job: notes its start and end in the run log; its first run lasts first_s seconds, any
# later run one second.
class PeersJob
  include Sidekiq::Worker
  sidekiq_options queue: QUEUE

  # One line of the run log; whether the job had started before (in any worker).
  def note(event)
    path = ENV.fetch("PEERS_RUNLOG")
    before = File.readlines(path).any? { |line| line.include?(%("job":"#{jid}")) && line.include?(%("event":"start")) }
    line = JSON.generate({job: jid, pid: Process.pid, event: event, t: Time.now.to_f})
    File.open(path, "a") { |log| log.write(line + "\n") }
    before
  end

  def perform(first_s)
    again = note("start")
    sleep(again ? 1.0 : first_s)
    note("end")
  end
end

def client
  Sidekiq.configure_client do |config|
    config.redis = {url: ENV.fetch("REDIS_URL"), id: "peers-inspect"}
  end
end

def enqueue(first_s)
  client
  jid = Sidekiq::Client.push("class" => PeersJob, "queue" => QUEUE, "args" => [first_s.to_f])
  puts JSON.generate({id: jid})
end

def inspect_job(jid)
  client
  require "sidekiq/api"
  where = {
    "queued" => Sidekiq::Queue.new(QUEUE).find_job(jid),
    "scheduled" => Sidekiq::ScheduledSet.new.find_job(jid),
    "retry" => Sidekiq::RetrySet.new.find_job(jid),
    "dead" => Sidekiq::DeadSet.new.find_job(jid)
  }.reject { |_, found| found.nil? }
  # As a live process's heartbeat last reported it (every 5 s); a killed process's report
  # stays until its heartbeat key expires (60 s).
  busy = Sidekiq::Workers.new.count { |_, _, work| work["payload"]["jid"] == jid }
  found = where.values.first
  puts JSON.generate({
    where: where.keys,
    busy: busy,
    retry_count: found && found.item["retry_count"],
    error: found && found.item["error_message"]
  })
end

def version
  puts JSON.generate({sidekiq: Sidekiq::VERSION, "redis-rb": Redis::VERSION, ruby: RUBY_VERSION})
end

if $PROGRAM_NAME == __FILE__
  command, arg = ARGV
  case command
  when "enqueue" then enqueue(arg)
  when "inspect" then inspect_job(arg)
  when "version" then version
  else abort("usage: ruby peer.rb enqueue SECONDS | inspect JID | version")
  end
end
