//! Statistics over dimensions (ncwa), records (ncra) and ensemble members (nces):
//! one accumulator, fed by generic kernels over every numeric type, that skips fill
//! values, unpacks packed data on the fly, and applies weights and masks.
//!
//! Definitions (NCO manual, "Operation Types"; weighted forms checked against NCO 5.1.4
//! with `ncwa -w`): with weights `w` (1 when unweighted) over the valid, masked-in
//! elements `x`:
//!
//! | op | result |
//! |---|---|
//! | avg | Σwx / Σw |
//! | sqravg | (Σwx / Σw)² |
//! | avgsqr | Σwx² / Σw |
//! | rms | √(Σwx² / Σw) |
//! | rmssdn | √(Σx² / (n−1)) unweighted, √(Σwx² / Σw) weighted |
//! | sqrt | √(Σwx / Σw) |
//! | ttl | Σwx |
//! | max, min | max, min of wx |
//! | mabs, mibs | max, min of \|wx\| |
//! | mebs | Σw\|x\| / Σw |
//! | tabs | Σw\|x\| |
//!
//! `-N` (no normalisation) returns the numerator of the averaging forms. An output
//! element with no valid input is missing.

use crate::error::{Error, Result};
use crate::packing::Packing;
use crate::types::NcNum;

/// A statistic (`-y`, `--op_typ`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Mean (default).
    Avg,
    /// Square of the mean.
    SqrAvg,
    /// Mean of squares.
    AvgSqr,
    /// Maximum.
    Max,
    /// Minimum.
    Min,
    /// Root mean square.
    Rms,
    /// Root mean square normalised by n−1.
    RmsSdn,
    /// Square root of the mean.
    Sqrt,
    /// Total (sum).
    Ttl,
    /// Maximum absolute value.
    MAbs,
    /// Mean absolute value.
    MEbs,
    /// Minimum absolute value.
    MIbs,
    /// Total of absolute values.
    TAbs,
}

impl Op {
    /// Parse an NCO operation name (`avg`, `ttl`, `max`, ... and `mean`, `sum`, `total`).
    ///
    /// Errors name the option `-y`.
    pub fn parse(s: &str) -> Result<Op> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "avg" | "mean" | "average" => Op::Avg,
            "sqravg" => Op::SqrAvg,
            "avgsqr" => Op::AvgSqr,
            "max" | "maximum" => Op::Max,
            "min" | "minimum" => Op::Min,
            "rms" | "rootmeansquare" => Op::Rms,
            "rmssdn" => Op::RmsSdn,
            "sqrt" => Op::Sqrt,
            "ttl" | "total" | "sum" => Op::Ttl,
            "mabs" => Op::MAbs,
            "mebs" => Op::MEbs,
            "mibs" => Op::MIbs,
            "tabs" => Op::TAbs,
            _ => return Err(Error::option("-y", format!("unknown operation \"{s}\""))),
        })
    }

    /// The CF `cell_methods` word NCO writes for this statistic.
    pub fn cell_method(self) -> &'static str {
        // Names as NCO 5.1.4 writes them (checked with ncwa -y for each).
        match self {
            Op::Avg => "mean",
            Op::SqrAvg => "square_of_mean",
            Op::AvgSqr => "variance",
            Op::Max => "maximum",
            Op::Min => "minimum",
            Op::Rms => "root_mean_square",
            Op::RmsSdn => "root_mean_square_nm1",
            Op::Sqrt => "square_root_of_mean",
            Op::Ttl => "sum",
            Op::MAbs => "maximum_absolute_value",
            Op::MEbs => "mean_absolute_value",
            Op::MIbs => "minimum_absolute_value",
            Op::TAbs => "sum absolute_value",
        }
    }

    fn is_extreme(self) -> bool {
        matches!(self, Op::Max | Op::Min | Op::MAbs | Op::MIbs)
    }
}

/// Running statistic over `n` output elements.
#[derive(Clone, Debug)]
pub struct Accum {
    /// The statistic.
    pub op: Op,
    val: Vec<f64>,
    /// Per-element weight sums and counts of the contributions that were not uniform,
    /// added to the uniform ones; empty until the first such contribution (a fill-free
    /// average never needs them: two thirds of the accumulator's memory).
    wsum: Vec<f64>,
    tally: Vec<u64>,
    /// Count and weight sum that every element received (fill-free element-wise adds).
    uni_n: u64,
    uni_w: f64,
    weighted: bool,
}

/// A broadcast operand (weight or mask) over a variable: `values[Σ idx_k * stride[k]]`
/// is the operand for the variable element with indices `idx`.
#[derive(Clone, Copy, Debug)]
pub struct Broadcast<'a> {
    /// Operand values.
    pub values: &'a [f64],
    /// Stride into `values` per dimension of the variable (0 where it does not vary).
    pub stride: &'a [usize],
}

impl Accum {
    /// A new accumulator with `n` output elements.
    pub fn new(op: Op, n: usize) -> Accum {
        let init = match op {
            Op::Max | Op::MAbs => f64::NEG_INFINITY,
            Op::Min | Op::MIbs => f64::INFINITY,
            _ => 0.0,
        };
        Accum {
            op,
            val: vec![init; n],
            wsum: Vec::new(),
            tally: Vec::new(),
            uni_n: 0,
            uni_w: 0.0,
            weighted: false,
        }
    }

    /// Number of output elements.
    pub fn len(&self) -> usize {
        self.val.len()
    }

    /// True when there are no output elements.
    pub fn is_empty(&self) -> bool {
        self.val.is_empty()
    }

    /// Number of valid values accumulated into element `i`.
    pub fn tally(&self, i: usize) -> u64 {
        self.tally.get(i).copied().unwrap_or(0) + self.uni_n
    }

    /// Weight sum of element `i`.
    fn weight(&self, i: usize) -> f64 {
        self.wsum.get(i).copied().unwrap_or(0.0) + self.uni_w
    }

    /// Allocate the per-element counts before a contribution that is not uniform.
    fn counts(&mut self) {
        if self.tally.len() != self.val.len() {
            self.wsum = vec![0.0; self.val.len()];
            self.tally = vec![0; self.val.len()];
        }
    }

    /// Add one value to output element `o`. Extremes follow NCO's comparison: the
    /// first value is taken as it is and a later one replaces it only when it compares
    /// greater (smaller), so a NaN first value stays (NaN) and a later NaN is skipped.
    #[inline(always)]
    fn push_val(&mut self, o: usize, x: f64, w: f64) {
        let first = self.tally(o) == 0;
        let v = &mut self.val[o];
        let keep = |v: &mut f64, y: f64, better: bool| {
            if first || better {
                *v = y;
            }
        };
        match self.op {
            Op::Avg | Op::Sqrt | Op::SqrAvg | Op::Ttl => *v += w * x,
            Op::MEbs | Op::TAbs => *v += w * x.abs(),
            Op::AvgSqr | Op::Rms | Op::RmsSdn => *v += w * x * x,
            Op::Max => keep(v, w * x, w * x > *v),
            Op::Min => keep(v, w * x, w * x < *v),
            // The weight multiplies the absolute value, as for mebs and tabs (NCO 5.1.4:
            // `-y mibs -w` with a weight of -1 gives -|x|).
            Op::MAbs => keep(v, w * x.abs(), w * x.abs() > *v),
            Op::MIbs => keep(v, w * x.abs(), w * x.abs() < *v),
        }
    }

    #[inline(always)]
    fn push(&mut self, o: usize, x: f64, w: f64) {
        self.push_val(o, x, w);
        self.wsum[o] += w;
        self.tally[o] += 1;
    }

    /// Element-wise accumulation: `x[i]` goes into output element `i` with weight `w`
    /// (ncra records, nces members). `x.len()` must equal [`Accum::len`].
    pub fn add_elementwise<T: NcNum>(
        &mut self,
        x: &[T],
        fill: Option<T>,
        pack: Option<&Packing>,
        w: f64,
    ) {
        debug_assert_eq!(x.len(), self.val.len());
        self.add_elems(x.iter().copied(), fill, pack, w);
    }

    /// [`Accum::add_elementwise`] straight from big-endian bytes (the classic format's
    /// layout), with no decoded copy.
    pub fn add_elementwise_be<T: NcNum>(
        &mut self,
        raw: &[u8],
        fill: Option<T>,
        pack: Option<&Packing>,
        w: f64,
    ) {
        debug_assert_eq!(raw.len() / T::SIZE, self.val.len());
        self.add_elems(raw.chunks_exact(T::SIZE).map(T::from_be), fill, pack, w);
    }

    /// [`Accum::add_elementwise`] of one member whose values arrive in blocks of
    /// native-order bytes: `blocks` is handed a sink to call with (byte offset into
    /// the member's values, whole elements), the blocks together covering every
    /// element once. The result is the same as adding the whole member at once.
    ///
    /// Errors: those of `blocks`, as it returned them (the accumulator then holds part
    /// of the member: the caller gives it up).
    pub fn add_member_blocks_ne<T: NcNum, E>(
        &mut self,
        fill: Option<T>,
        pack: Option<&Packing>,
        w: f64,
        blocks: impl FnOnce(&mut dyn FnMut(usize, &[u8])) -> Result<(), E>,
    ) -> Result<(), E> {
        self.begin_member(fill.is_some(), w);
        blocks(&mut |at, raw| {
            let x = raw.chunks_exact(T::SIZE).map(T::from_ne);
            self.add_elems_at(at / T::SIZE, x, fill, pack, w);
        })?;
        self.end_member(fill.is_some(), w);
        Ok(())
    }

    fn add_elems<T: NcNum>(
        &mut self,
        x: impl Iterator<Item = T>,
        fill: Option<T>,
        pack: Option<&Packing>,
        w: f64,
    ) {
        self.begin_member(fill.is_some(), w);
        self.add_elems_at(0, x, fill, pack, w);
        self.end_member(fill.is_some(), w);
    }

    /// Before a member's elements: the weight noted; explicit counts when elements
    /// may be missing.
    fn begin_member(&mut self, missing: bool, w: f64) {
        if w != 1.0 {
            self.weighted = true;
        }
        if missing {
            self.counts();
        }
    }

    /// After a member's elements: a member with no missing element counts for every
    /// element at once.
    fn end_member(&mut self, missing: bool, w: f64) {
        if !missing {
            self.uni_n += 1;
            self.uni_w += w;
        }
    }

    /// Elements `x` of a member added into output elements from `off` on (between
    /// [`Accum::begin_member`] and [`Accum::end_member`]).
    #[inline(always)]
    fn add_elems_at<T: NcNum>(
        &mut self,
        off: usize,
        x: impl Iterator<Item = T>,
        fill: Option<T>,
        pack: Option<&Packing>,
        w: f64,
    ) {
        match (fill, pack) {
            // Every element valid: counts are uniform, only the values are touched.
            (None, None) if matches!(self.op, Op::Avg | Op::Ttl) && w == 1.0 => {
                let val = &mut self.val[off..];
                nco_base::cpu::with_avx2(
                    #[inline(always)]
                    || {
                        for (v, e) in val.iter_mut().zip(x) {
                            *v += e.to_f64();
                        }
                    },
                );
            }
            (None, _) => {
                for (i, e) in x.enumerate() {
                    let v = pack.map_or(e.to_f64(), |p| p.unpack(e.to_f64()));
                    self.push_val(off + i, v, w);
                }
            }
            // Sums with missing values, unpacked: selects instead of a branch per
            // element, so the loop vectorises. Adding +0.0 for a missing element leaves
            // the sum as it was (a sum that starts at +0.0 is never -0.0).
            (Some(f), None) if matches!(self.op, Op::Avg | Op::Ttl) => {
                let (val, wsum, tally) = (
                    &mut self.val[off..],
                    &mut self.wsum[off..],
                    &mut self.tally[off..],
                );
                nco_base::cpu::with_avx2(
                    #[inline(always)]
                    || {
                        for (((v, ws), t), e) in val
                            .iter_mut()
                            .zip(wsum.iter_mut())
                            .zip(tally.iter_mut())
                            .zip(x)
                        {
                            let ok = e != f;
                            *v += if ok { w * e.to_f64() } else { 0.0 };
                            *ws += if ok { w } else { 0.0 };
                            *t += u64::from(ok);
                        }
                    },
                );
            }
            (Some(_), _) => {
                for (i, e) in x.enumerate() {
                    if fill == Some(e) {
                        continue;
                    }
                    let v = pack.map_or(e.to_f64(), |p| p.unpack(e.to_f64()));
                    self.push(off + i, v, w);
                }
            }
        }
    }

    /// General reduction: `x` has `shape` (C order); element `idx` goes to output
    /// element `out_base + Σ idx_k * out_stride[k]` (stride 0 on reduced dimensions).
    /// Elements equal to `fill` are skipped; `mask` keeps elements whose mask value is
    /// non-zero; `weight` multiplies each element.
    ///
    /// Plain sums (avg, ttl without weights, masks or packing) take a vectorised path
    /// that adds each row in 8 lanes: the summation order then differs from NCO's
    /// sequential one by reassociation only (relative differences near 1e-16 in the
    /// double accumulator, invisible in float results).
    pub fn add_reduce<T: NcNum>(
        &mut self,
        x: &[T],
        shape: &[usize],
        out_stride: &[usize],
        out_base: usize,
        fill: Option<T>,
        pack: Option<&Packing>,
        weight: Option<Broadcast<'_>>,
        mask: Option<Broadcast<'_>>,
    ) {
        if weight.is_some() {
            self.weighted = true;
        }
        self.counts();
        let nd = shape.len();
        if nd == 0 {
            if let Some(&e) = x.first() {
                let ok_mask = mask.is_none_or(|m| m.values[0] != 0.0);
                if fill != Some(e) && ok_mask {
                    let v = pack.map_or(e.to_f64(), |p| p.unpack(e.to_f64()));
                    let w = weight.map_or(1.0, |w| w.values[0]);
                    self.push(out_base, v, w);
                }
            }
            return;
        }
        let row = shape[nd - 1];
        if row == 0 || x.is_empty() {
            return;
        }
        let outer: usize = shape[..nd - 1].iter().product();
        let os_last = out_stride[nd - 1];
        let ws_last = weight.map_or(0, |w| w.stride[nd - 1]);
        let ms_last = mask.map_or(0, |m| m.stride[nd - 1]);
        let plain = weight.is_none()
            && mask.is_none()
            && pack.is_none()
            && matches!(self.op, Op::Avg | Op::Ttl);
        let mut idx = vec![0usize; nd - 1];
        for r in 0..outer {
            let mut ob = out_base;
            let mut wb = 0;
            let mut mb = 0;
            for (k, &i) in idx.iter().enumerate() {
                ob += i * out_stride[k];
                wb += weight.map_or(0, |w| i * w.stride[k]);
                mb += mask.map_or(0, |m| i * m.stride[k]);
            }
            let xs = &x[r * row..(r + 1) * row];
            if plain && os_last == 0 {
                let (s, n) = row_sum(xs, fill);
                if n > 0 {
                    self.val[ob] += s;
                    self.wsum[ob] += n as f64;
                    self.tally[ob] += n;
                }
            } else if plain && os_last == 1 {
                let vals = &mut self.val[ob..ob + row];
                let ws = &mut self.wsum[ob..ob + row];
                let ts = &mut self.tally[ob..ob + row];
                for j in 0..row {
                    let e = xs[j];
                    if fill != Some(e) {
                        vals[j] += e.to_f64();
                        ws[j] += 1.0;
                        ts[j] += 1;
                    }
                }
            } else {
                for (j, &e) in xs.iter().enumerate() {
                    if fill == Some(e) {
                        continue;
                    }
                    if let Some(m) = mask {
                        if m.values[mb + j * ms_last] == 0.0 {
                            continue;
                        }
                    }
                    let mut v = e.to_f64();
                    if let Some(p) = pack {
                        v = p.unpack(v);
                    }
                    let w = weight.map_or(1.0, |w| w.values[wb + j * ws_last]);
                    self.push(ob + j * os_last, v, w);
                }
            }
            for k in (0..nd - 1).rev() {
                idx[k] += 1;
                if idx[k] < shape[k] {
                    break;
                }
                idx[k] = 0;
            }
        }
    }

    /// Merge another accumulator of the same op and size (parallel partial results).
    /// `other` holds the values that come after this accumulator's (extremes compare
    /// as [`Accum::push_val`] does).
    pub fn merge(&mut self, other: &Accum) {
        self.weighted |= other.weighted;
        let own_uni = self.uni_n;
        self.uni_n += other.uni_n;
        self.uni_w += other.uni_w;
        for i in 0..self.val.len() {
            if other.tally(i) == 0 {
                continue;
            }
            let (a, b) = (self.val[i], other.val[i]);
            let first = self.tally.get(i).copied().unwrap_or(0) + own_uni == 0;
            self.val[i] = match self.op {
                Op::Max | Op::MAbs => {
                    if first || b > a {
                        b
                    } else {
                        a
                    }
                }
                Op::Min | Op::MIbs => {
                    if first || b < a {
                        b
                    } else {
                        a
                    }
                }
                _ => a + b,
            };
            if !other.tally.is_empty() {
                self.counts();
                self.wsum[i] += other.wsum[i];
                self.tally[i] += other.tally[i];
            }
        }
    }

    /// Final values converted to `ty` as [`super::to_values_with`] converts the results
    /// of [`Accum::finish`] under `mode` (`fill` where no valid value arrived; integers
    /// rounded, ties to even; a result that does not fit wraps or becomes `fill`, see
    /// [`crate::cast`]), with the counts of results that did not fit; the mean, the
    /// common case, without the intermediate results and vectorised.
    pub fn finish_values(
        &self,
        normalize: bool,
        ty: crate::types::NcType,
        fill: f64,
        mode: crate::cast::Overflow,
    ) -> (crate::types::Values, crate::cast::Casts) {
        fn mean<T: NcNum>(
            a: &Accum,
            fill: f64,
            mode: crate::cast::Overflow,
        ) -> (crate::types::Values, crate::cast::Casts) {
            let fill = T::from_f64(fill);
            let mut out: Vec<T> = Vec::with_capacity(a.val.len());
            let mut c = crate::cast::Casts::default();
            let mut one = |v: f64, ws: f64, t: u64| {
                let m = v / (ws + a.uni_w);
                let valid = t + a.uni_n != 0;
                let (y, w, f) = crate::cast::cast_with(m, fill, mode);
                c.wrapped += usize::from(valid & w);
                c.filled += usize::from(valid & f);
                if valid {
                    y
                } else {
                    fill
                }
            };
            nco_base::cpu::with_avx2(
                #[inline(always)]
                || {
                    if a.tally.is_empty() {
                        out.extend(a.val.iter().map(|&v| one(v, 0.0, 0)));
                    } else {
                        out.extend(
                            a.val
                                .iter()
                                .zip(&a.wsum)
                                .zip(&a.tally)
                                .map(|((&v, &ws), &t)| one(v, ws, t)),
                        );
                    }
                },
            );
            (T::into_values(out), c)
        }
        if self.op == Op::Avg && normalize && ty.is_numeric() {
            crate::dispatch_type!(ty, T => mean::<T>(self, fill, mode);
                char => unreachable!("numeric type");
                string => unreachable!("numeric type"))
        } else {
            super::to_values_with(&self.finish(normalize), ty, fill, mode)
        }
    }

    /// The accumulated sums as they stand, with no normalisation and no finishing: the
    /// sum of the (weighted) values for `avg`, `sqravg`, `sqrt` and `ttl`, of their
    /// squares for `rms` and `rmssdn`, of their absolute values for `mebs` and `tabs`,
    /// the extreme for `min max mabs mibs`; `None` where no valid value arrived. This is
    /// what NCO 5.1.4's ncra writes under `-N` (measured: `-y rms -N` over 1, -3, 5
    /// gives 35, `-y sqravg -N` gives 3), while its ncwa applies the square or square
    /// root to the numerator ([`Accum::finish`] with `normalize = false`).
    pub fn sums(&self) -> Vec<Option<f64>> {
        (0..self.val.len())
            .map(|i| (self.tally(i) > 0).then(|| self.val[i]))
            .collect()
    }

    /// The accumulator's whole state appended to `out` as bytes, little-endian, for a
    /// partial result that another process merges ([`Accum::decode`], then
    /// [`Accum::merge`]): element count, uniform count and weight sum, the weighted
    /// flag, whether per-element counts follow, the running values (`f64` each), then
    /// the per-element weight sums (`f64`) and counts (`u64`) when there are any. The
    /// statistic is not in it: the reader knows it from its own plan.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let n = self.val.len();
        let counts = !self.tally.is_empty();
        out.reserve(26 + n * 8 * (1 + 2 * usize::from(counts)));
        out.extend_from_slice(&(n as u64).to_le_bytes());
        out.extend_from_slice(&self.uni_n.to_le_bytes());
        out.extend_from_slice(&self.uni_w.to_le_bytes());
        out.push(u8::from(self.weighted));
        out.push(u8::from(counts));
        for v in &self.val {
            out.extend_from_slice(&v.to_le_bytes());
        }
        if counts {
            for v in &self.wsum {
                out.extend_from_slice(&v.to_le_bytes());
            }
            for v in &self.tally {
                out.extend_from_slice(&v.to_le_bytes());
            }
        }
    }

    /// An accumulator of statistic `op` from the front of `bytes` as
    /// [`Accum::encode`] wrote it, and the number of bytes it took.
    ///
    /// Errors: `bytes` too short for what its counts announce, or a flag byte other
    /// than 0 or 1 (a damaged or foreign record).
    pub fn decode(op: Op, bytes: &[u8]) -> Result<(Accum, usize)> {
        let mut acc = Accum::new(op, 0);
        let used = acc.decode_into(op, bytes)?;
        Ok((acc, used))
    }

    /// [`Accum::decode`] into `self`, whose arrays' memory is reused (a merge decodes
    /// one part after another into the same scratch accumulator).
    ///
    /// Errors: as [`Accum::decode`]; `self` is then unspecified.
    pub fn decode_into(&mut self, op: Op, bytes: &[u8]) -> Result<usize> {
        let bad = || Error::msg("partial result: damaged accumulator record");
        let word = |at: usize| -> Result<[u8; 8]> {
            bytes
                .get(at..at + 8)
                .and_then(|b| b.try_into().ok())
                .ok_or_else(bad)
        };
        let n = usize::try_from(u64::from_le_bytes(word(0)?)).map_err(|_| bad())?;
        let uni_n = u64::from_le_bytes(word(8)?);
        let uni_w = f64::from_le_bytes(word(16)?);
        let (weighted, counts) = match bytes.get(24..26) {
            Some(&[w, c]) if w <= 1 && c <= 1 => (w == 1, c == 1),
            _ => return Err(bad()),
        };
        let arrays = if counts { 3 } else { 1 };
        let body = n
            .checked_mul(8 * arrays)
            .filter(|&b| bytes.len() - 26 >= b)
            .ok_or_else(bad)?;
        fn words<T>(out: &mut Vec<T>, src: &[u8], of: impl Fn([u8; 8]) -> T) {
            out.clear();
            out.extend(src.chunks_exact(8).map(|c| {
                let mut w = [0u8; 8];
                w.copy_from_slice(c);
                of(w)
            }));
        }
        words(&mut self.val, &bytes[26..26 + 8 * n], f64::from_le_bytes);
        if counts {
            words(
                &mut self.wsum,
                &bytes[26 + 8 * n..26 + 16 * n],
                f64::from_le_bytes,
            );
            words(
                &mut self.tally,
                &bytes[26 + 16 * n..26 + 24 * n],
                u64::from_le_bytes,
            );
        } else {
            self.wsum.clear();
            self.tally.clear();
        }
        self.op = op;
        self.uni_n = uni_n;
        self.uni_w = uni_w;
        self.weighted = weighted;
        Ok(26 + body)
    }

    /// Final values; `None` where no valid value arrived. `normalize = false` is `-N`.
    pub fn finish(&self, normalize: bool) -> Vec<Option<f64>> {
        (0..self.val.len())
            .map(|i| {
                let n = self.tally(i);
                if n == 0 {
                    return None;
                }
                let v = self.val[i];
                let ws = self.weight(i);
                let mean = |v: f64| if normalize { v / ws } else { v };
                Some(match self.op {
                    Op::Avg | Op::MEbs | Op::AvgSqr => mean(v),
                    Op::SqrAvg => mean(v).powi(2),
                    Op::Sqrt | Op::Rms => mean(v).sqrt(),
                    Op::RmsSdn => {
                        if self.weighted || !normalize {
                            mean(v).sqrt()
                        } else if n > 1 {
                            (v / (n - 1) as f64).sqrt()
                        } else {
                            f64::NAN
                        }
                    }
                    _ if self.op.is_extreme() => v,
                    _ => v,
                })
            })
            .collect()
    }
}

/// Sum and count of the elements of `xs` that are not `fill`, in 8 lanes.
#[inline]
fn row_sum<T: NcNum>(xs: &[T], fill: Option<T>) -> (f64, u64) {
    let mut acc = [0.0f64; 8];
    let chunks = xs.chunks_exact(8);
    let rest = chunks.remainder();
    let mut n = xs.len() as u64;
    match fill {
        None => {
            for c in chunks {
                for k in 0..8 {
                    acc[k] += c[k].to_f64();
                }
            }
            for (k, &e) in rest.iter().enumerate() {
                acc[k] += e.to_f64();
            }
        }
        Some(f) => {
            for c in chunks {
                for k in 0..8 {
                    let e = c[k];
                    let keep = e != f;
                    acc[k] += if keep { e.to_f64() } else { 0.0 };
                    n -= u64::from(!keep);
                }
            }
            for (k, &e) in rest.iter().enumerate() {
                if e == f {
                    n -= 1;
                } else {
                    acc[k] += e.to_f64();
                }
            }
        }
    }
    (
        (acc[0] + acc[1]) + (acc[2] + acc[3]) + ((acc[4] + acc[5]) + (acc[6] + acc[7])),
        n,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_added_in_blocks_equal_members_added_whole() {
        let n = 1000;
        let members: Vec<Vec<f32>> = (0..3)
            .map(|m| {
                (0..n)
                    .map(|i| {
                        if (i + m) % 17 == 0 {
                            -99.0
                        } else {
                            (i * (m + 1)) as f32 / 7.0
                        }
                    })
                    .collect()
            })
            .collect();
        let pack = Packing {
            scale_factor: 0.5,
            add_offset: 1.0,
            unpacked_type: crate::types::NcType::Double,
            hdf: false,
        };
        for op in [Op::Avg, Op::Max, Op::Rms, Op::Ttl] {
            for (fill, pack, w) in [
                (None, None, 1.0),
                (Some(-99.0f32), None, 1.0),
                (Some(-99.0), Some(&pack), 2.0),
                (None, Some(&pack), 0.5),
            ] {
                let (mut whole, mut blocks) = (Accum::new(op, n), Accum::new(op, n));
                for x in &members {
                    whole.add_elementwise(x, fill, pack, w);
                    let bytes: Vec<u8> = x.iter().flat_map(|v| v.to_ne_bytes()).collect();
                    blocks
                        .add_member_blocks_ne::<f32, ()>(fill, pack, w, |sink| {
                            for (k, b) in bytes.chunks(4 * 37).enumerate() {
                                sink(k * 4 * 37, b);
                            }
                            Ok(())
                        })
                        .unwrap();
                }
                assert_eq!(
                    whole.finish(true),
                    blocks.finish(true),
                    "{op:?} {fill:?} {w}"
                );
            }
        }
    }

    fn run(op: Op, x: &[f32], w: Option<&[f64]>) -> Option<f64> {
        let mut a = Accum::new(op, 1);
        let stride = [1usize];
        let wb = w.map(|v| Broadcast {
            values: v,
            stride: &stride,
        });
        a.add_reduce(x, &[x.len()], &[0], 0, None, None, wb, None);
        a.finish(true)[0]
    }

    #[test]
    fn encoded_partials_merge_to_the_whole() {
        // Records 1..=6 of a 3-element variable with a fill value in some: the halves
        // encoded, decoded and merged give the one-pass accumulator's results.
        let rec = |r: i32| -> Vec<i32> { vec![r, if r % 2 == 0 { -99 } else { 2 * r }, -r] };
        for op in [Op::Avg, Op::Max, Op::Min, Op::RmsSdn, Op::Ttl, Op::MIbs] {
            let mut whole = Accum::new(op, 3);
            let mut halves = [Accum::new(op, 3), Accum::new(op, 3)];
            for r in 1..=6 {
                whole.add_elementwise(&rec(r), Some(-99), None, 0.5);
                halves[usize::from(r > 3)].add_elementwise(&rec(r), Some(-99), None, 0.5);
            }
            let mut bytes = Vec::new();
            halves[0].encode(&mut bytes);
            halves[1].encode(&mut bytes);
            let (mut a, used) = Accum::decode(op, &bytes).unwrap();
            let (b, rest) = Accum::decode(op, &bytes[used..]).unwrap();
            assert_eq!(used + rest, bytes.len());
            a.merge(&b);
            assert_eq!(a.finish(true), whole.finish(true), "{op:?}");
            assert_eq!(a.tally(1), 3);
        }
        // A fill-free accumulator has no per-element counts: 26 bytes and the values.
        let mut u = Accum::new(Op::Avg, 2);
        u.add_elementwise(&[1.0f64, 2.0], None, None, 1.0);
        let mut bytes = Vec::new();
        u.encode(&mut bytes);
        assert_eq!(bytes.len(), 26 + 16);
        assert!(Accum::decode(Op::Avg, &bytes[..bytes.len() - 1]).is_err());
        bytes[24] = 7;
        assert!(Accum::decode(Op::Avg, &bytes).is_err());
    }

    #[test]
    fn weighted_statistics_match_nco() {
        // ncwa -a lev -w lev_wgt -v lev_var on NCO's in.nc: lev_var 100,500,1000,
        // lev_wgt 10,2,1.
        let x = [100.0f32, 500.0, 1000.0];
        let w = [10.0, 2.0, 1.0];
        let close = |a: Option<f64>, b: f64| (a.unwrap() - b).abs() < 1e-3 * b.abs().max(1.0);
        assert!(close(run(Op::Avg, &x, Some(&w)), 230.769));
        assert!(close(run(Op::Max, &x, Some(&w)), 1000.0));
        assert!(close(run(Op::Ttl, &x, Some(&w)), 3000.0));
        assert!(close(run(Op::Rms, &x, Some(&w)), 350.823));
        assert!(close(run(Op::RmsSdn, &x, Some(&w)), 350.823));
        assert!(close(run(Op::SqrAvg, &x, Some(&w)), 53254.4));
        assert!(close(run(Op::AvgSqr, &x, Some(&w)), 123077.0));
        assert!(close(run(Op::Sqrt, &x, Some(&w)), 15.1911));
        assert!(close(run(Op::RmsSdn, &x, None), 793.725));
    }

    #[test]
    fn vectorised_sums_match_the_general_path() {
        let x: Vec<f32> = (0..37).map(|i| i as f32 * 0.5).collect();
        let mut a = Accum::new(Op::Avg, 1);
        a.add_reduce(&x, &[37], &[0], 0, Some(3.0), None, None, None);
        let mut b = Accum::new(Op::Avg, 1);
        let ones = vec![1.0; 37];
        b.add_reduce(
            &x,
            &[37],
            &[0],
            0,
            Some(3.0),
            None,
            Some(Broadcast {
                values: &ones,
                stride: &[1],
            }),
            None,
        );
        assert_eq!(a.tally(0), 36);
        assert!((a.finish(true)[0].unwrap() - b.finish(true)[0].unwrap()).abs() < 1e-12);
        // Row-wise path: reduce over the first dimension of [3,4].
        let mut c = Accum::new(Op::Ttl, 4);
        c.add_reduce(
            &(0..12).collect::<Vec<i32>>(),
            &[3, 4],
            &[0, 1],
            0,
            None,
            None,
            None,
            None,
        );
        assert_eq!(
            c.finish(true),
            vec![Some(12.0), Some(15.0), Some(18.0), Some(21.0)]
        );
    }

    #[test]
    fn fill_and_mask_and_packing() {
        let mut a = Accum::new(Op::Avg, 1);
        a.add_reduce(
            &[73.0f32, 1e36, 73.0, 1e36],
            &[4],
            &[0],
            0,
            Some(1e36),
            None,
            None,
            None,
        );
        assert_eq!(a.finish(true), vec![Some(73.0)]);
        let mut a = Accum::new(Op::Avg, 2);
        // [2,2] reduce over dim 1, mask keeps column 0 only in row 1.
        let mask = [0.0, 0.0, 1.0, 0.0];
        let ms = [2usize, 1];
        a.add_reduce(
            &[1i32, 2, 3, 4],
            &[2, 2],
            &[1, 0],
            0,
            None,
            None,
            None,
            Some(Broadcast {
                values: &mask,
                stride: &ms,
            }),
        );
        assert_eq!(a.finish(true), vec![None, Some(3.0)]);
        let p = Packing {
            scale_factor: 2.0,
            add_offset: 1.0,
            unpacked_type: crate::types::NcType::Double,
            hdf: false,
        };
        let mut a = Accum::new(Op::Ttl, 1);
        a.add_elementwise(&[1i16], None, Some(&p), 1.0);
        a.add_elementwise(&[1i16], None, Some(&p), 1.0);
        assert_eq!(a.finish(true), vec![Some(6.0)]);
        assert!(Op::parse("bogus").is_err());
        assert_eq!(Op::parse("mean").unwrap(), Op::Avg);
    }

    #[test]
    fn vectorised_paths_equal_the_element_by_element_ones() {
        use crate::cast::Overflow;
        use crate::types::{NcType, Values};
        // Members with missing values (fill -999), NaN and negative zero; the identity
        // packing sends the same data through the general branchy path.
        let ident = Packing {
            scale_factor: 1.0,
            add_offset: 0.0,
            unpacked_type: NcType::Float,
            hdf: false,
        };
        let n = 37;
        let member = |k: usize| -> Vec<f32> {
            (0..n)
                .map(|i| match (i + k) % 7 {
                    0 => -999.0,
                    3 if k == 1 => f32::NAN,
                    5 => -0.0,
                    _ => (i * 3 + k) as f32 * 0.37 - 5.0,
                })
                .collect()
        };
        for op in [Op::Avg, Op::Ttl] {
            for w in [1.0, 0.25] {
                let (mut fast, mut slow) = (Accum::new(op, n), Accum::new(op, n));
                for k in 0..3 {
                    let x = member(k);
                    fast.add_elementwise(&x, Some(-999.0), None, w);
                    slow.add_elementwise(&x, Some(-999.0), Some(&ident), w);
                }
                let (a, b) = (fast.finish(true), slow.finish(true));
                for (i, (a, b)) in a.iter().zip(&b).enumerate() {
                    let same = match (a, b) {
                        (Some(a), Some(b)) => {
                            a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
                        }
                        (None, None) => true,
                        _ => false,
                    };
                    assert!(same, "{op:?} w {w} element {i}: {a:?} vs {b:?}");
                }
            }
        }
        // The typed finish equals the conversion of the results, missing and
        // out-of-range (fill) elements included.
        let mut acc = Accum::new(Op::Avg, 4);
        acc.add_elementwise(&[1.5f64, 40000.0, -999.0, 2.5], Some(-999.0), None, 1.0);
        for ty in [NcType::Short, NcType::Float, NcType::Double, NcType::UByte] {
            for mode in [Overflow::Fill, Overflow::Wrap] {
                let want = crate::to_values_with(&acc.finish(true), ty, -99.0, mode);
                assert_eq!(acc.finish_values(true, ty, -99.0, mode), want, "{ty:?}");
            }
        }
        // Without missing values the per-element counts are never allocated.
        let mut plain = Accum::new(Op::Avg, 3);
        plain.add_elementwise(&[1.5f32, 2.5, -7.0], None, None, 1.0);
        plain.add_elementwise(&[2.5f32, 2.5, 40000.0], None, None, 1.0);
        assert!(plain.tally.is_empty() && plain.wsum.is_empty());
        for ty in [NcType::Short, NcType::Float, NcType::Int] {
            let want = crate::to_values_with(&plain.finish(true), ty, -99.0, Overflow::Wrap);
            assert_eq!(
                plain.finish_values(true, ty, -99.0, Overflow::Wrap),
                want,
                "{ty:?}"
            );
        }
        assert_eq!(plain.tally(2), 2);
        let (v, c) = acc.finish_values(true, NcType::Short, -99.0, Overflow::Fill);
        assert_eq!((v, c.filled), (Values::Short(vec![2, -99, -99, 2]), 1));
        let (v, c) = acc.finish_values(true, NcType::Short, -99.0, Overflow::Wrap);
        assert_eq!((v, c.wrapped), (Values::Short(vec![2, -25536, -99, 2]), 1));
    }
}
