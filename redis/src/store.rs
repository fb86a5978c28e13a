//! [`Fleet`] for [`RedisFleet`]: one round trip per call (a command, a pipeline or a script).

use bytes::Bytes;
use zest_core::http::server::{Fleet, FleetError, FleetKey, FleetMessage, SavedSession};

use crate::RedisFleet;

/// The scripts that must run whole: appending to a standalone stream (number, keep, bound,
/// expire, wake the members) and reading it from where a GET starts.
#[derive(Debug)]
pub(crate) struct Scripts {
    append: redis::Script,
    after: redis::Script,
    delivered: redis::Script,
}

/// KEYS: stream, counter, delivered. ARGV: json, kept, ttl, channel, wake message.
const APPEND: &str = r"
local seq = redis.call('INCR', KEYS[2])
redis.call('ZADD', KEYS[1], seq, seq .. ':' .. ARGV[1])
redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -1 - tonumber(ARGV[2]))
for i = 1, 3 do redis.call('EXPIRE', KEYS[i], ARGV[3]) end
redis.call('PUBLISH', ARGV[4], ARGV[5])
return seq
";

/// KEYS: stream, delivered. ARGV: after ('' for what was not delivered yet). Returns the
/// number read from, then the entries.
const AFTER: &str = r"
local after = ARGV[1]
if after == '' then after = redis.call('GET', KEYS[2]) or '0' end
local found = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. after, '+inf')
table.insert(found, 1, after)
return found
";

/// KEYS: delivered. ARGV: number, ttl. The mark only moves forward (two carriers for a
/// moment must not move it back).
const DELIVERED: &str = r"
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
if tonumber(ARGV[1]) > current then redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2]) end
return 0
";

impl Scripts {
    pub(crate) fn new() -> Self {
        Self {
            append: redis::Script::new(APPEND),
            after: redis::Script::new(AFTER),
            delivered: redis::Script::new(DELIVERED),
        }
    }
}

fn encode(session: &SavedSession) -> Result<Vec<u8>, FleetError> {
    serde_json::to_vec(session).map_err(|e| FleetError(format!("cannot encode a session: {e}")))
}

fn decode(stored: Option<Vec<u8>>) -> Result<Option<SavedSession>, FleetError> {
    let Some(bytes) = stored else { return Ok(None) };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| FleetError(format!("a stored session does not read back: {e}")))
}

impl RedisFleet {
    fn ttl(&self) -> u64 {
        self.options.session_ttl.as_secs().max(1)
    }

    fn channel(&self, to: Option<u32>) -> String {
        match to {
            Some(member) => self.key(format_args!("m:{member}")),
            None => self.key(format_args!("all")),
        }
    }
}

impl Fleet for RedisFleet {
    fn member(&self) -> u32 {
        Self::member(self)
    }

    fn save(&self, key: &FleetKey, session: &SavedSession) -> Result<(), FleetError> {
        let value = encode(session)?;
        let (state, all) = (self.key(format_args!("s:{key}")), self.key(format_args!("sessions")));
        self.with("cannot save a session", |c| {
            redis::pipe()
                .cmd("SET")
                .arg(&state)
                .arg(value)
                .arg("EX")
                .arg(self.ttl())
                .ignore()
                .cmd("SADD")
                .arg(&all)
                .arg(key.as_str())
                .ignore()
                .query::<()>(c)
        })
    }

    fn load(&self, key: &FleetKey) -> Result<Option<SavedSession>, FleetError> {
        let state = self.key(format_args!("s:{key}"));
        // The standalone stream's keys live as long as the session: a session in use keeps
        // its numbering even when nothing is sent on it for a whole time to live.
        let standalone = [
            self.key(format_args!("g:{key}")),
            self.key(format_args!("g:{key}:n")),
            self.key(format_args!("g:{key}:d")),
        ];
        let (stored,): (Option<Vec<u8>>,) = self.with("cannot load a session", |c| {
            let mut pipe = redis::pipe();
            pipe.cmd("GETEX").arg(&state).arg("EX").arg(self.ttl());
            for key in &standalone {
                pipe.cmd("EXPIRE").arg(key).arg(self.ttl()).ignore();
            }
            pipe.query(c)
        })?;
        decode(stored)
    }

    fn remove(&self, key: &FleetKey) -> Result<(), FleetError> {
        let ended = serde_json::to_string(&FleetMessage::Ended { session: key.clone() })
            .map_err(|e| FleetError(e.to_string()))?;
        let keys = [
            self.key(format_args!("s:{key}")),
            self.key(format_args!("g:{key}")),
            self.key(format_args!("g:{key}:n")),
            self.key(format_args!("g:{key}:d")),
        ];
        let (all, channel) = (self.key(format_args!("sessions")), self.channel(None));
        // Answer streams' events expire with the session's time to live.
        self.with("cannot end a session", |c| {
            redis::pipe()
                .cmd("DEL")
                .arg(&keys)
                .ignore()
                .cmd("SREM")
                .arg(&all)
                .arg(key.as_str())
                .ignore()
                .cmd("PUBLISH")
                .arg(&channel)
                .arg(&ended)
                .ignore()
                .query::<()>(c)
        })
    }

    fn sessions(&self) -> Result<Vec<(FleetKey, SavedSession)>, FleetError> {
        let all = self.key(format_args!("sessions"));
        let keys: Vec<String> =
            self.with("cannot list sessions", |c| redis::cmd("SMEMBERS").arg(&all).query(c))?;
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let states: Vec<String> = keys.iter().map(|k| self.key(format_args!("s:{k}"))).collect();
        let stored: Vec<Option<Vec<u8>>> =
            self.with("cannot read sessions", |c| redis::cmd("MGET").arg(&states).query(c))?;
        let mut live = Vec::new();
        let mut gone = Vec::new();
        for (key, stored) in keys.into_iter().zip(stored) {
            match decode(stored)? {
                Some(session) => live.push((FleetKey::from_stored(&key), session)),
                None => gone.push(key),
            }
        }
        if !gone.is_empty() {
            // Sessions that expired leave the set here.
            self.with("cannot tidy sessions", |c| {
                redis::cmd("SREM").arg(&all).arg(&gone).query::<()>(c)
            })?;
        }
        Ok(live)
    }

    fn send(&self, to: Option<u32>, message: &FleetMessage) -> Result<(), FleetError> {
        let json = serde_json::to_string(message).map_err(|e| FleetError(e.to_string()))?;
        let channel = self.channel(to);
        self.with("cannot send to the fleet", |c| {
            redis::cmd("PUBLISH").arg(&channel).arg(&json).query::<()>(c)
        })
    }

    fn store_event(
        &self,
        key: &FleetKey,
        stream: u64,
        seq: u64,
        event: &Bytes,
    ) -> Result<(), FleetError> {
        let events = self.key(format_args!("e:{key}:{stream}"));
        let kept = self.options.events_per_stream;
        self.with("cannot keep an event", |c| {
            redis::pipe()
                .cmd("ZADD")
                .arg(&events)
                .arg(seq)
                .arg(event.as_ref())
                .ignore()
                .cmd("ZREMRANGEBYRANK")
                .arg(&events)
                .arg(0)
                .arg(-1 - kept as i64)
                .ignore()
                .cmd("EXPIRE")
                .arg(&events)
                .arg(self.ttl())
                .ignore()
                .query::<()>(c)
        })
    }

    fn replay(&self, key: &FleetKey, stream: u64, after: u64) -> Result<Vec<Bytes>, FleetError> {
        let events = self.key(format_args!("e:{key}:{stream}"));
        let found: Vec<Vec<u8>> = self.with("cannot replay a stream", |c| {
            redis::cmd("ZRANGEBYSCORE").arg(&events).arg(format!("({after}")).arg("+inf").query(c)
        })?;
        Ok(found.into_iter().map(Bytes::from).collect())
    }

    fn forget_stream(&self, key: &FleetKey, stream: u64) -> Result<(), FleetError> {
        let events = self.key(format_args!("e:{key}:{stream}"));
        self.with("cannot forget a stream", |c| redis::cmd("DEL").arg(&events).query::<()>(c))
    }

    fn append_standalone(&self, key: &FleetKey, json: &[u8]) -> Result<u64, FleetError> {
        let wake = serde_json::to_string(&FleetMessage::Standalone { session: key.clone() })
            .map_err(|e| FleetError(e.to_string()))?;
        let mut invocation = self.scripts.append.prepare_invoke();
        invocation
            .key(self.key(format_args!("g:{key}")))
            .key(self.key(format_args!("g:{key}:n")))
            .key(self.key(format_args!("g:{key}:d")))
            .arg(json)
            .arg(self.options.events_per_stream)
            .arg(self.ttl())
            .arg(self.channel(None))
            .arg(wake);
        self.with("cannot append to a standalone stream", |c| invocation.invoke(c))
    }

    fn standalone_after(
        &self,
        key: &FleetKey,
        after: Option<u64>,
    ) -> Result<(u64, Vec<(u64, Bytes)>), FleetError> {
        let mut invocation = self.scripts.after.prepare_invoke();
        invocation
            .key(self.key(format_args!("g:{key}")))
            .key(self.key(format_args!("g:{key}:d")))
            .arg(after.map(|n| n.to_string()).unwrap_or_default());
        let found: Vec<Vec<u8>> =
            self.with("cannot read a standalone stream", |c| invocation.invoke(c))?;
        let mut found = found.into_iter();
        let from = found.next().and_then(|n| std::str::from_utf8(&n).ok()?.parse().ok());
        let entries = found
            .filter_map(|entry| {
                let colon = entry.iter().position(|b| *b == b':')?;
                let seq = std::str::from_utf8(&entry[..colon]).ok()?.parse().ok()?;
                Some((seq, Bytes::copy_from_slice(&entry[colon + 1..])))
            })
            .collect();
        Ok((from.unwrap_or(0), entries))
    }

    fn delivered(&self, key: &FleetKey, seq: u64) -> Result<(), FleetError> {
        let mut invocation = self.scripts.delivered.prepare_invoke();
        invocation.key(self.key(format_args!("g:{key}:d"))).arg(seq).arg(self.ttl());
        self.with("cannot mark delivery", |c| invocation.invoke::<()>(c))
    }
}
