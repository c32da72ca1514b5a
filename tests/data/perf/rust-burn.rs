#[inline(never)]
fn spin(n: u64) -> u64 {
    let mut s = 0u64;
    for i in 0..n { s = s.wrapping_add(i.wrapping_mul(31) ^ (s >> 3)); }
    s
}
fn main() {
    let end = std::time::Instant::now() + std::time::Duration::from_millis(800);
    let mut acc = 0u64;
    let v: Vec<u64> = (0..1000).collect();
    while std::time::Instant::now() < end {
        acc = acc.wrapping_add(spin(200000));
        acc = acc.wrapping_add(v.iter().map(|x| spin(*x)).sum::<u64>());
    }
    println!("{}", acc);
}
