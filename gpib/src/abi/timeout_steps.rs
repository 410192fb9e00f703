//! linux-gpib's (and NI-488.2's) 18 fixed timeout steps, and rounding a `Duration` to
//! the shortest step that is not shorter. Pure: shared by the linux-gpib backend and
//! the libgpib-compatible simulator library.

use std::time::Duration;

/// linux-gpib's timeout steps, indexed by their code (`TNONE` = 0 = no timeout, then
/// `T10us` = 1 ... `T1000s` = 17). Code 0 is shown as [`Duration::ZERO`].
pub const TIMEOUT_STEPS: [Duration; 18] = [
    Duration::ZERO,
    Duration::from_micros(10),
    Duration::from_micros(30),
    Duration::from_micros(100),
    Duration::from_micros(300),
    Duration::from_millis(1),
    Duration::from_millis(3),
    Duration::from_millis(10),
    Duration::from_millis(30),
    Duration::from_millis(100),
    Duration::from_millis(300),
    Duration::from_secs(1),
    Duration::from_secs(3),
    Duration::from_secs(10),
    Duration::from_secs(30),
    Duration::from_secs(100),
    Duration::from_secs(300),
    Duration::from_secs(1000),
];

/// The linux-gpib timeout code for `requested` and the duration it stands for.
///
/// The step is the shortest one not shorter than asked; [`Duration::ZERO`] (no
/// timeout) and anything above 1000 s become `TNONE` (code 0, never time out), the
/// only setting that is not shorter than asked.
///
/// ```
/// use std::time::Duration;
/// use gpib::abi::timeout_steps::timeout_code;
/// assert_eq!(timeout_code(Duration::from_millis(1500)), (12, Duration::from_secs(3)));
/// assert_eq!(timeout_code(Duration::from_secs(1)), (11, Duration::from_secs(1)));
/// assert_eq!(timeout_code(Duration::ZERO), (0, Duration::ZERO));
/// ```
pub fn timeout_code(requested: Duration) -> (i32, Duration) {
    if requested.is_zero() {
        return (0, Duration::ZERO);
    }
    TIMEOUT_STEPS
        .iter()
        .enumerate()
        .skip(1)
        .find(|(_, &d)| d >= requested)
        .map_or((0, Duration::ZERO), |(i, &d)| (i as i32, d))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_round_up_to_a_step() {
        let ms = Duration::from_millis;
        assert_eq!(timeout_code(Duration::ZERO), (0, Duration::ZERO));
        assert_eq!(
            timeout_code(Duration::from_nanos(1)),
            (1, Duration::from_micros(10))
        );
        assert_eq!(timeout_code(ms(1)), (5, ms(1)));
        assert_eq!(timeout_code(ms(150)), (10, ms(300)));
        assert_eq!(timeout_code(ms(1500)), (12, ms(3000)));
        assert_eq!(
            timeout_code(Duration::from_secs(60)),
            (15, Duration::from_secs(100))
        );
        assert_eq!(
            timeout_code(Duration::from_secs(1000)),
            (17, Duration::from_secs(1000))
        );
        // Longer than the longest step: only "never" is not shorter.
        assert_eq!(timeout_code(Duration::from_secs(1001)), (0, Duration::ZERO));
        for (code, &d) in TIMEOUT_STEPS.iter().enumerate().skip(1) {
            assert_eq!(timeout_code(d), (code as i32, d));
            assert!(code == 1 || TIMEOUT_STEPS[code - 1] < d);
        }
    }

    #[test]
    fn every_step_rounds_up_never_down() {
        assert_eq!(
            timeout_code(Duration::from_nanos(1)),
            (1, Duration::from_micros(10))
        );
        assert_eq!(timeout_code(Duration::from_secs(1001)), (0, Duration::ZERO));
        for (code, &d) in TIMEOUT_STEPS.iter().enumerate().skip(1) {
            assert_eq!(timeout_code(d), (code as i32, d));
            let just_over = d + Duration::from_nanos(1);
            let (c, applied) = timeout_code(just_over);
            assert!(applied >= just_over || c == 0, "{d:?}");
        }
    }
}
