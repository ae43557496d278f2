//! Exact boundary cases of the load arithmetic of SPEC 5 (issue 30, item 12): each pins a
//! comparison that a mutated operator (`>` for `>=`, `||` for `&&`) would change.

use sweeper_goal::{KvRole, concurrency_for_ratio, request_count, tokens_per_request};

fn role(kv_tokens_per_rank: u64, block_size: u64, attention_dp: u64, replicas: u64) -> KvRole {
    KvRole {
        kv_tokens_per_rank,
        block_size,
        attention_dp,
        replicas,
    }
}

#[test]
fn request_count_is_at_least_one_and_rounds_half_to_even() {
    assert_eq!(request_count(0.4, 1.0), 1); // rounds to 0: the floor of 1 applies
    assert_eq!(request_count(0.5, 1.0), 1); // 0.5 rounds to 0 (even)
    assert_eq!(request_count(1.0, 1.0), 1);
    assert_eq!(request_count(1.5, 1.0), 2);
    assert_eq!(request_count(2.5, 1.0), 2);
    assert_eq!(request_count(3.5, 1.0), 4);
    assert_eq!(request_count(10.0, 64.0), 640);
    // a product no float holds: the documented 1 (a config with a fixed load refuses it)
    assert_eq!(request_count(1e300, 1e300), 1);
}

#[test]
fn tokens_per_request_is_isl_plus_half_osl_rounded_down() {
    assert_eq!(tokens_per_request(100, 101), 150);
    assert_eq!(tokens_per_request(100, 1), 100);
    assert_eq!(tokens_per_request(7, 0), 7);
}

#[test]
fn kv_tokens_round_down_to_whole_blocks_only_with_blocks() {
    assert_eq!(role(10_001, 2, 1, 1).kv_tokens(), 10_000);
    assert_eq!(role(10_001, 1, 1, 1).kv_tokens(), 10_001);
    assert_eq!(role(10_001, 0, 1, 1).kv_tokens(), 10_001);
    assert_eq!(role(10_000, 64, 2, 3).kv_tokens(), 59_904);
    assert_eq!(role(u64::MAX, 1, 2, 2).kv_tokens(), u64::MAX);
}

#[test]
fn a_capacity_of_exactly_one_request_is_feasible_and_one_token_less_is_not() {
    // isl = osl = 100: 150 tokens per request
    let one = concurrency_for_ratio("aggregated", role(150, 1, 1, 1), 100, 100, 1.0).unwrap();
    assert_eq!((one.capacity, one.concurrency), (1, 1));
    let err = concurrency_for_ratio("decode", role(149, 1, 1, 1), 100, 100, 1.0).unwrap_err();
    assert_eq!((err.kv_tokens, err.tokens_per_request), (149, 150));
    assert!(
        err.to_string().contains("decode role holds 149 KV tokens"),
        "{err}"
    );
}

#[test]
fn concurrency_is_the_floor_of_ratio_times_capacity_and_at_least_one() {
    let r = role(10_000, 64, 2, 3); // capacity 399 at isl = osl = 100
    let at = |ratio: f64| {
        concurrency_for_ratio("aggregated", r, 100, 100, ratio)
            .unwrap()
            .concurrency
    };
    assert_eq!(at(0.5), 199);
    assert_eq!(at(1.0), 399);
    assert_eq!(at(2.0), 798); // no upper clamp
    assert_eq!(at(0.001), 1); // floor 0: the floor of 1 applies
    assert_eq!(at(0.0), 1);
    assert_eq!(at(f64::MAX), 1); // a product no float holds is not a concurrency
}

#[test]
fn a_capacity_below_one_request_says_how_to_fix_the_input() {
    // llama3-70b-fp8 on one 80 GB H100: no KV cache left after the weights
    let err = concurrency_for_ratio("aggregated", role(0, 32, 1, 1), 8000, 1000, 1.0).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("aggregated role holds 0 KV tokens"), "{text}");
    assert!(
        text.contains("give its workers more GPUs, use a GPU with more memory or shorter requests"),
        "{text}"
    );
}
