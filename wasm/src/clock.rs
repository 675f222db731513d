//! The core `Clock` over JS time: `Date.now()` by default, or the user's `clock` function.

use core::cell::RefCell;

use js_sys::Function;
use snowdrift::Clock;
use wasm_bindgen::prelude::*;

use crate::interop;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = Date, js_name = now)]
    fn date_now() -> f64;
}

/// A reading no layout accepts: the generator reports it as a time error, and the call
/// then throws the clock's own error instead.
const FAILED: u64 = u64::MAX;

/// Wall-clock time for generators.
///
/// The default is `Date.now()`: wall time, so IDs from different processes and machines
/// order by their real creation time and decode to the right date, and the cheapest time
/// call in every runtime. `performance.timeOrigin + performance.now()` never goes back
/// within a process, but it drifts from wall time (it ignores NTP corrections and, in
/// some browsers, stops while the machine sleeps), so a long-lived process would stamp
/// IDs with the wrong time and interleave badly with other nodes. The rare backwards step
/// of `Date.now()` is what `onClockBackwards` is for.
pub enum JsClock {
    DateNow,
    Custom {
        f: Function,
        /// What the function threw or returned that is not a time, until it is rethrown.
        error: RefCell<Option<JsValue>>,
    },
}

impl JsClock {
    pub fn new(custom: Option<Function>) -> JsClock {
        match custom {
            None => JsClock::DateNow,
            Some(f) => JsClock::Custom {
                f,
                error: RefCell::new(None),
            },
        }
    }

    /// The error the clock function raised during the last call, if any.
    pub fn take_error(&self) -> Option<JsValue> {
        match self {
            JsClock::DateNow => None,
            JsClock::Custom { error, .. } => error.borrow_mut().take(),
        }
    }
}

impl Clock for JsClock {
    #[inline]
    fn now_ms(&self) -> u64 {
        match self {
            // Date.now() is an integer in 0..2^53 by definition; `as` saturates anyway.
            JsClock::DateNow => date_now() as u64,
            JsClock::Custom { f, error } => {
                let reading = f.call0(&JsValue::UNDEFINED);
                match reading.as_ref().map(JsValue::as_f64) {
                    Ok(Some(ms)) if ms >= 0.0 && ms <= interop::MAX_SAFE as f64 => {
                        ms as u64 // drops the fraction of performance.now()-style clocks
                    }
                    Ok(Some(_)) => {
                        let v = reading.unwrap_or(JsValue::UNDEFINED);
                        *error.borrow_mut() = Some(
                            interop::int_arg("the clock's reading", &v, 0, interop::MAX_SAFE)
                                .err()
                                .unwrap_or(JsValue::UNDEFINED),
                        );
                        FAILED
                    }
                    Ok(None) => {
                        let v = reading.unwrap_or(JsValue::UNDEFINED);
                        *error.borrow_mut() = Some(interop::wrong_type(
                            "the clock's reading",
                            "a number of Unix milliseconds",
                            &v,
                        ));
                        FAILED
                    }
                    Err(thrown) => {
                        *error.borrow_mut() = Some(thrown.clone());
                        FAILED
                    }
                }
            }
        }
    }
}
