//! Property tests of sealed IDs (feature `seal`): a permutation of the layout's ID space
//! (round trips both ways on random and edge values, every sealed value inside the space),
//! keys and tweaks that differ in one bit give unrelated permutations, consecutive IDs
//! give unrelated sealed IDs, and no input makes a call panic.
#![cfg(feature = "seal")]

use proptest::prelude::*;
use snowdrift::text::{self, Format};
use snowdrift::{ErrorKind, Field, Layout, Sealer};

fn any_key() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 16),
        proptest::collection::vec(any::<u8>(), 24),
        proptest::collection::vec(any::<u8>(), 32),
    ]
}

fn any_layout() -> impl Strategy<Value = Layout> {
    proptest::sample::select(Layout::PRESETS.iter().map(|(_, l)| *l).collect::<Vec<_>>())
}

/// Values at and next to the edges of a `bits`-wide space, and either side of the halves'
/// boundary.
fn edges(bits: u32) -> Vec<u64> {
    let max = u64::MAX >> (64 - bits);
    let half = 1u64 << (bits - bits / 2);
    vec![
        0,
        1,
        2,
        half - 1,
        half,
        half + 1,
        max / 2,
        max / 2 + 1,
        max - 1,
        max,
    ]
}

/// The fraction of differing bits between the sealed forms of `ids` under `a` and `b`.
fn distance(a: &Sealer, b: &Sealer, ids: &[u64]) -> f64 {
    let differing: u32 = ids
        .iter()
        .map(|&id| (a.seal(id).unwrap() ^ b.seal(id).unwrap()).count_ones())
        .sum();
    f64::from(differing) / (ids.len() as f64 * f64::from(a.bits()))
}

proptest! {
    #[test]
    fn seal_is_a_permutation_of_the_id_space(
        layout in any_layout(),
        key in any_key(),
        tweak in proptest::collection::vec(any::<u8>(), 0..40),
        raw in any::<u64>(),
    ) {
        let sealer = Sealer::new(&layout, &key, &tweak).unwrap();
        let bits = if layout.fits_i64() { 63 } else { 64 };
        prop_assert_eq!(sealer.bits(), bits);
        let max = sealer.max();
        let id = raw & max;
        for id in edges(bits).into_iter().chain([id]) {
            let sealed = sealer.seal(id).unwrap();
            prop_assert!(sealed <= max);
            prop_assert_eq!(sealer.open(sealed), Ok(id));
            // And the other way: every value of the space is some ID's sealed form.
            let opened = sealer.open(id).unwrap();
            prop_assert!(opened <= max);
            prop_assert_eq!(sealer.seal(opened), Ok(id));
            // Through the text forms, as a public ID travels.
            for form in [Format::Base32, Format::Base62] {
                let public = text::format(sealed, form);
                prop_assert_eq!(sealer.open(text::parse(&public, form).unwrap()), Ok(id));
            }
        }
    }

    #[test]
    fn keys_and_tweaks_one_bit_apart_give_unrelated_sealed_ids(
        layout in any_layout(),
        key in any_key(),
        tweak in proptest::collection::vec(any::<u8>(), 1..20),
        key_bit in 0usize..128,
        tweak_bit in 0usize..8,
        seed in any::<u64>(),
    ) {
        let sealer = Sealer::new(&layout, &key, &tweak).unwrap();
        let mut other_key = key.clone();
        other_key[key_bit / 8] ^= 1 << (key_bit % 8);
        let mut other_tweak = tweak.clone();
        other_tweak[0] ^= 1 << tweak_bit;
        let mut longer_tweak = tweak.clone();
        longer_tweak.push(0);
        // 64 IDs: consecutive ones (as a generator issues them) from a random start.
        let start = seed & sealer.max() & !63;
        let ids: Vec<u64> = (start..start + 64).collect();
        for other in [
            Sealer::new(&layout, &other_key, &tweak).unwrap(),
            Sealer::new(&layout, &key, &other_tweak).unwrap(),
            Sealer::new(&layout, &key, &longer_tweak).unwrap(),
            Sealer::new(&layout, &key, &[]).unwrap(),
        ] {
            // 64 IDs of 63 or 64 bits: half of the bits differ, one standard deviation 0.8%.
            let d = distance(&sealer, &other, &ids);
            prop_assert!((0.42..=0.58).contains(&d), "{d}");
            prop_assert!(ids.iter().all(|&id| sealer.seal(id) != other.seal(id)));
        }
        // Consecutive IDs: their sealed forms differ in half their bits too.
        let differing: u32 = ids
            .windows(2)
            .map(|w| (sealer.seal(w[0]).unwrap() ^ sealer.seal(w[1]).unwrap()).count_ones())
            .sum();
        let d = f64::from(differing) / (63.0 * f64::from(sealer.bits()));
        prop_assert!((0.42..=0.58).contains(&d), "{d}");
    }

    #[test]
    fn no_input_panics(
        layout in any_layout(),
        key in proptest::collection::vec(any::<u8>(), 0..48),
        tweak in proptest::collection::vec(any::<u8>(), 0..300),
        values in proptest::collection::vec(any::<u64>(), 1..8),
    ) {
        match Sealer::new(&layout, &key, &tweak) {
            Err(e) => {
                prop_assert!(![16, 24, 32].contains(&key.len()));
                prop_assert_eq!(e.kind(), ErrorKind::KeyLength);
                prop_assert_eq!(e.value(), Some(key.len() as u64));
            }
            Ok(sealer) => {
                prop_assert!([16, 24, 32].contains(&key.len()));
                for v in values.into_iter().chain([u64::MAX, 1 << 63]) {
                    let (sealed, opened) = (sealer.seal(v), sealer.open(v));
                    if v <= sealer.max() {
                        prop_assert!(sealed.is_ok() && opened.is_ok());
                    } else {
                        let (s, o) = (sealed.unwrap_err(), opened.unwrap_err());
                        prop_assert_eq!((s.field(), s.value(), s.max()), (Some(Field::Id), Some(v), Some(sealer.max())));
                        prop_assert_eq!((o.field(), o.value(), o.max()), (Some(Field::Sealed), Some(v), Some(sealer.max())));
                    }
                }
            }
        }
    }
}
