//! Names a team teaches the analysis (`Settings::extensions`, filled from configuration): each
//! kind changes what is found, and without it the same code stays silent.

#![cfg(feature = "analysis")]

use retry_audit::analysis::Extensions;
use retry_audit::{check_source, Settings};

fn rules(src: &str, ext: Extensions) -> Vec<&'static str> {
    let mut settings = Settings::preview();
    settings.extensions = ext;
    let mut ids: Vec<&'static str> = check_source(src, &settings)
        .expect("parses")
        .iter()
        .map(|d| d.rule.id())
        .collect();
    ids.sort_unstable();
    ids
}

const SLEEP_WRAPPER: &str = r"
fn sync(store: &Store) -> Result<(), Error> {
    for _ in 0..5 {
        match store.sync() {
            Ok(()) => return Ok(()),
            Err(e) => log::warn!('sync failed: {e}'),
        }
        crate::clock::pause(Duration::from_secs(1));
    }
    Err(Error::GaveUp)
}
";

#[test]
fn a_sleep_wrapper_is_a_wait_once_taught() {
    let src = SLEEP_WRAPPER.replace('\'', "\"");
    // Untaught, the wrapper is an unknown call: the retry seems to go round with no wait.
    assert_eq!(rules(&src, Extensions::default()), ["RA011"]);
    let ext = Extensions {
        sleep_fns: vec!["clock::pause".to_owned()],
        ..Extensions::default()
    };
    assert_eq!(rules(&src, ext), ["RA002"]);
}

const RANDOM_SOURCE: &str = r"
fn sync(store: &Store) -> Result<(), Error> {
    for attempt in 0..5u32 {
        match store.sync() {
            Ok(()) => return Ok(()),
            Err(_) => std::thread::sleep(Duration::from_millis(100 << attempt) + entropy::spread()),
        }
    }
    Err(Error::GaveUp)
}
";

#[test]
fn a_random_source_is_jitter_once_taught() {
    assert_eq!(rules(RANDOM_SOURCE, Extensions::default()), ["RA003"]);
    let ext = Extensions {
        random_sources: vec!["entropy::spread".to_owned()],
        ..Extensions::default()
    };
    assert_eq!(rules(RANDOM_SOURCE, ext), Vec::<&str>::new());
}

const KEY_CONSTRUCTOR: &str = r#"
async fn pay(client: &Client, order: &Order) -> Result<Receipt, Error> {
    for attempt in 0..3u32 {
        let resp = client
            .post("https://pay.example/charges")
            .header("Idempotency-Key", ids::fresh_id())
            .json(order)
            .send()
            .await;
        match resp {
            Ok(r) => return Ok(r.json().await?),
            Err(e) if !(e.is_timeout() || e.is_connect()) => return Err(e.into()),
            Err(_) => {}
        }
        tokio::time::sleep(Duration::from_millis(fastrand::u64(0..(100 << attempt)))).await;
    }
    Err(Error::GaveUp)
}
"#;

#[test]
fn a_key_constructor_is_a_fresh_key_once_taught() {
    assert_eq!(
        rules(KEY_CONSTRUCTOR, Extensions::default()),
        Vec::<&str>::new()
    );
    let ext = Extensions {
        key_constructors: vec!["ids::fresh_id".to_owned()],
        ..Extensions::default()
    };
    assert_eq!(rules(KEY_CONSTRUCTOR, ext), ["RA005"]);
}

const STATUS_ACCESSOR: &str = r"
async fn fetch(api: &Api) -> Result<Page, Error> {
    for attempt in 0..4u32 {
        let resp = api.get_page().await?;
        if resp.reply_code() == 200 {
            return Ok(resp.page());
        }
        tokio::time::sleep(Duration::from_millis(fastrand::u64(0..(100 << attempt)))).await;
    }
    Err(Error::GaveUp)
}
";

#[test]
fn a_status_accessor_is_a_status_once_taught() {
    assert_eq!(
        rules(STATUS_ACCESSOR, Extensions::default()),
        Vec::<&str>::new()
    );
    let ext = Extensions {
        status_accessors: vec!["reply_code".to_owned()],
        ..Extensions::default()
    };
    assert_eq!(rules(STATUS_ACCESSOR, ext), ["RA004"]);
}

/// The keys of the built-in models work in `[extend]` too (one loader reads both).
#[test]
fn the_models_keys_are_taught_the_same_way() {
    // A wait method of the team's own runtime.
    let sleep_method = r"
async fn sync(store: &Store, rt: &Runtime) -> Result<(), Error> {
    for _ in 0..5 {
        match store.sync().await {
            Ok(()) => return Ok(()),
            Err(e) => log::warn!('sync failed: {e}'),
        }
        rt.nap(Duration::from_secs(1)).await;
    }
    Err(Error::GaveUp)
}
";
    let sleep_method = &sleep_method.replace('\'', "\"");
    // Untaught, `rt.nap(..).await` is a call whose wait is unknown: no finding (not "no wait").
    assert_eq!(
        rules(sleep_method, Extensions::default()),
        Vec::<&str>::new()
    );
    let ext = Extensions {
        sleep_methods: vec!["nap".to_owned()],
        ..Extensions::default()
    };
    assert_eq!(rules(sleep_method, ext), ["RA002"]);

    // An error handler that backs off before it returns (a blocking one: an awaited call
    // between attempts is a wait of unknown length whatever its name).
    let handler = r"
fn read(db: &Db, key: &[u8]) -> Result<Vec<u8>, Error> {
    let mut txn = db.begin()?;
    let mut tries = 0;
    loop {
        match txn.get(key) {
            Ok(value) => return Ok(value),
            Err(err) if tries < 10 => {
                tries += 1;
                txn = txn.settle(err);
            }
            Err(err) => return Err(err),
        }
    }
}
";
    assert_eq!(rules(handler, Extensions::default()), ["RA011"]);
    let ext = Extensions {
        wait_handlers: vec!["settle".to_owned()],
        ..Extensions::default()
    };
    assert_eq!(rules(handler, ext), Vec::<&str>::new());
}

const EVERY_ERROR_RUNNER: &str = r"
async fn price(client: &Client, url: &str) -> Result<Price, Error> {
    crate::net::run_until_ok(|| async { client.get(url).send().await }).await
}
";

#[test]
fn a_runner_that_retries_every_error_is_ra004_once_taught() {
    assert_eq!(
        rules(EVERY_ERROR_RUNNER, Extensions::default()),
        Vec::<&str>::new()
    );
    let ext = Extensions {
        every_error_runners: vec!["net::run_until_ok".to_owned()],
        ..Extensions::default()
    };
    assert_eq!(rules(EVERY_ERROR_RUNNER, ext), ["RA004"]);
}

const SESSION: &str = r"
pub async fn outer_loop(mut dispatcher: Dispatcher) {
    loop {
        if let Err(err) = dispatcher.pump().await {
            tracing::error!(%err, 'pump failed');
            sleep(Duration::from_secs(10)).await;
        }
    }
}
";

#[test]
fn a_session_word_is_vocabulary_once_taught() {
    let src = SESSION.replace('\'', "\"");
    // Untaught, `pump` is an unknown operation: nothing says the loop retries it.
    assert!(rules(&src, Extensions::default()).is_empty());
    // Taught as a word of a whole session's name (`session-words`, vocabulary), the loop is a
    // supervisor restarting the session, and its fixed pause a retry's pause.
    let mut ext = Extensions::default();
    *ext.list_mut(retry_audit::analysis::known::List::SessionWords) = vec!["pump".to_owned()];
    assert_eq!(rules(&src, ext), ["RA002"]);
}
