//! `--cb yr_srt,yr_end,mth_srt,mth_end,tpd` (climatology bounds) of ncra, ncrcat and
//! nces, as ncclimo calls them: monthly means of three Januaries into a January
//! climatology (time bounds become climatology bounds), four seasonal climatologies
//! into an annual one (climatology bounds become time bounds), three into DJF (they
//! stay), and six-hourly days into a diurnal climatology. Values and attributes are
//! NCO 5.1.4's (`NCO_RS_BIN_DIR=/usr/bin` runs the same checks against it).

use crate::common::cdl;
use nco_tests::{is_nco, nco, Dump, Scratch};

/// January of `year` (noleap days since 2000-01-01), its time bounds and one value.
fn january(s: &Scratch, year: i64) -> String {
    let d = (year - 2000) * 365;
    cdl(
        s,
        &format!("m{year}"),
        &format!(
            r#"netcdf m {{ dimensions: time = UNLIMITED ; nbnd = 2 ;
            variables:
              double time(time) ; time:units = "days since 2000-01-01" ;
                time:calendar = "noleap" ; time:bounds = "time_bnds" ;
              double time_bnds(time, nbnd) ;
              float T(time) ; T:cell_methods = "time: mean" ;
            data: time = {} ; time_bnds = {d}, {} ; T = {} ; }}"#,
            d + 15,
            d + 31,
            year - 1999
        ),
    )
}

/// Season `n` (1-4) of a climatology: climatology bounds, 90-day seasons.
fn season(s: &Scratch, n: i64) -> String {
    cdl(
        s,
        &format!("s{n}"),
        &format!(
            r#"netcdf s {{ dimensions: time = UNLIMITED ; nbnd = 2 ;
            variables:
              double time(time) ; time:units = "days since 2000-01-01" ;
                time:climatology = "climatology_bounds" ; time:calendar = "noleap" ;
              double climatology_bounds(time, nbnd) ;
              float T(time) ; T:cell_methods = "time: mean within years time: mean over years" ;
            data: time = {} ; climatology_bounds = {}, {} ; T = {n} ; }}"#,
            n * 90,
            (n - 1) * 90,
            n * 90
        ),
    )
}

fn text(v: &nco_tests::dump::Var, att: &str) -> Option<String> {
    v.attr(att).map(|a| match &a.values[0] {
        nco_tests::dump::Value::Text(t) => t.clone(),
        x => x.to_string(),
    })
}

const CLIMO_METHODS: &str = "time: mean within years time: mean over years";

#[test]
fn ncra_january_climatology_from_monthly_means() {
    let s = Scratch::new();
    let files: Vec<String> = (2000..=2002).map(|y| january(&s, y)).collect();
    let out = s.arg("clm.nc");
    nco("ncra")
        .args(["-O", "--cb=2000,2002,1,1,0"])
        .args(&files)
        .arg(&out)
        .succeeds();
    let d = Dump::of(&out);
    let names: Vec<&str> = d.root().vars.iter().map(|v| v.name.as_str()).collect();
    assert!(!names.contains(&"time_bnds"), "{names:?}");
    let (time, bounds) = (d.var("time"), d.var("climatology_bounds"));
    // Day 15 of January 2000; 2000-01-01 to 2002-02-01.
    assert_eq!(time.numbers(), [14.0]);
    assert_eq!(bounds.numbers(), [0.0, 761.0]);
    assert_eq!(
        text(time, "climatology").as_deref(),
        Some("climatology_bounds")
    );
    assert!(time.attr("bounds").is_none());
    assert_eq!(
        text(bounds, "units").as_deref(),
        Some("days since 2000-01-01")
    );
    assert_eq!(text(bounds, "calendar").as_deref(), Some("noleap"));
    assert!(bounds.attr("cell_methods").is_none());
    assert_eq!(
        text(d.var("T"), "cell_methods").as_deref(),
        Some(CLIMO_METHODS)
    );
    assert_eq!(text(time, "cell_methods").as_deref(), Some(CLIMO_METHODS));
    assert_eq!(d.var("T").numbers(), [2.0]);
    // NCO's order: the climatology attribute before cell_methods.
    let order: Vec<&str> = time.attrs.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(order, ["units", "calendar", "climatology", "cell_methods"]);
    // -y max: ours names the statistic over the years; NCO says mean.
    nco("ncra")
        .args(["-O", "-y", "max", "--cb=2000,2002,1,1,0"])
        .args(&files)
        .arg(&out)
        .succeeds();
    let want = if is_nco() {
        CLIMO_METHODS
    } else {
        "time: mean within years time: maximum over years"
    };
    assert_eq!(
        text(Dump::of(&out).var("T"), "cell_methods").as_deref(),
        Some(want)
    );
    // nces keeps the members' cell_methods.
    nco("nces")
        .args(["-O", "--cb=2000,2002,1,1,0"])
        .args(&files)
        .arg(&out)
        .succeeds();
    let d = Dump::of(&out);
    assert_eq!(d.var("climatology_bounds").numbers(), [0.0, 761.0]);
    assert_eq!(d.var("time").numbers(), [14.0]);
    assert_eq!(
        text(d.var("T"), "cell_methods").as_deref(),
        Some("time: mean")
    );
}

#[test]
fn ncra_annual_and_djf_from_seasonal_climatologies() {
    let s = Scratch::new();
    let seasons: Vec<String> = (1..=4).map(|n| season(&s, n)).collect();
    let out = s.arg("ann.nc");
    nco("ncra")
        .args(["-O", "--cb=2000,2002,1,12,0"])
        .args(&seasons)
        .arg(&out)
        .succeeds();
    let d = Dump::of(&out);
    let (time, bounds) = (d.var("time"), d.var("time_bnds"));
    assert_eq!(time.numbers(), [14.0]);
    assert_eq!(bounds.numbers(), [0.0, 1095.0]);
    assert_eq!(text(time, "bounds").as_deref(), Some("time_bnds"));
    assert!(time.attr("climatology").is_none());
    assert_eq!(
        text(d.var("T"), "cell_methods").as_deref(),
        Some("time: mean")
    );
    assert_eq!(d.var("T").numbers(), [2.5]);
    // Three seasonal climatologies (DJF): climatology bounds stay, December 2000 to
    // March 2002.
    nco("ncra")
        .args(["-O", "--cb=2000,2002,12,2,0"])
        .args(&seasons[..3])
        .arg(&out)
        .succeeds();
    let d = Dump::of(&out);
    assert_eq!(d.var("climatology_bounds").numbers(), [334.0, 789.0]);
    assert_eq!(d.var("time").numbers(), [348.0]);
    assert_eq!(
        text(d.var("T"), "cell_methods").as_deref(),
        Some(CLIMO_METHODS)
    );
    // Months 1-12 of two climatologies are ambiguous: NCO stops, so do we.
    let r = nco("ncra")
        .args(["-O", "--cb=2000,2002,1,12,0"])
        .args(&seasons[..2])
        .arg(&out)
        .run();
    if is_nco() {
        assert_eq!(r.code, Some(1), "{}", r.stderr);
    } else {
        r.clean_failure("--cb");
    }
}

#[test]
fn nces_diurnal_climatology() {
    let s = Scratch::new();
    let days: Vec<String> = (0..3)
        .map(|k| {
            cdl(
                &s,
                &format!("d{k}"),
                &format!(
                    r#"netcdf d {{ dimensions: time = UNLIMITED ; nbnd = 2 ;
                    variables:
                      double time(time) ; time:units = "hours since 2000-01-01" ;
                        time:calendar = "noleap" ; time:bounds = "time_bnds" ;
                      double time_bnds(time, nbnd) ; float T(time) ;
                    data: time = 1, 2, 3, 4 ; time_bnds = 0, 1, 1, 2, 2, 3, 3, 4 ;
                      T = {k}, 1, 2, 3 ; }}"#
                ),
            )
        })
        .collect();
    let out = s.arg("diurnal.nc");
    nco("nces")
        .args(["-O", "--cb=2000,2002,1,1,4"])
        .args(&days)
        .arg(&out)
        .succeeds();
    let d = Dump::of(&out);
    assert_eq!(d.var("time").numbers(), [3.0, 9.0, 15.0, 21.0]);
    assert_eq!(
        d.var("climatology_bounds").numbers(),
        [0.0, 18246.0, 6.0, 18252.0, 12.0, 18258.0, 18.0, 18264.0]
    );
}

#[test]
fn cb_without_bounds_warns_and_bad_uses_are_refused() {
    let s = Scratch::new();
    let plain = cdl(
        &s,
        "plain",
        r#"netcdf p { dimensions: time = UNLIMITED ;
        variables: double time(time) ; time:units = "days since 2000-01-01" ;
          time:calendar = "noleap" ; float T(time) ;
        data: time = 15 ; T = 1 ; }"#,
    );
    let out = s.arg("o.nc");
    let r = nco("ncra")
        .args(["-O", "--cb=2000,2002,1,1,0", &plain, &plain, &out])
        .succeeds();
    assert!(r.stderr.contains("WARNING"), "{}", r.stderr);
    assert!(Dump::of(&out)
        .root()
        .vars
        .iter()
        .all(|v| v.name != "climatology_bounds"));
    if is_nco() {
        return;
    }
    let files: Vec<String> = (2000..=2002).map(|y| january(&s, y)).collect();
    // ncrcat's three records are not one climatological time (NCO writes values read
    // past its arrays into the others).
    nco("ncrcat")
        .args(["-O", "--cb=2000,2002,1,1,0"])
        .args(&files)
        .arg(&out)
        .run()
        .clean_failure("--cb");
    for bad in ["2000,2002,1,13,0", "2000,2002,1,1", "2002,2000,1,1,0"] {
        nco("ncra")
            .args(["-O", &format!("--cb={bad}")])
            .args(&files)
            .arg(&out)
            .run()
            .clean_failure("--cb");
    }
    // The bounds left out of the output.
    nco("ncra")
        .args(["-O", "-C", "-v", "T,time", "--cb=2000,2002,1,1,0"])
        .args(&files)
        .arg(&out)
        .run()
        .clean_failure("--cb");
    nco("ncecat")
        .args(["-O", "--cb=2000,2002,1,1,0"])
        .args(&files)
        .arg(&out)
        .run()
        .clean_failure("--cb");
}

/// ncclimo's diurnal path: ncrcat of the means of each timestep of the day; the
/// records' `cell_methods` become the climatology's, as NCO 5.1.4 writes them.
#[test]
fn ncrcat_diurnal_climatology_rewrites_cell_methods() {
    let s = Scratch::new();
    let steps: Vec<String> = (0..4)
        .map(|k| {
            cdl(
                &s,
                &format!("tpd{k}"),
                &format!(
                    r#"netcdf t {{ dimensions: time = UNLIMITED ; nbnd = 2 ;
                    variables:
                      double time(time) ; time:units = "hours since 2000-01-01" ;
                        time:calendar = "noleap" ; time:bounds = "time_bnds" ;
                        time:cell_methods = "time: mean" ;
                      double time_bnds(time, nbnd) ;
                      float T(time) ; T:cell_methods = "time: mean" ;
                    data: time = {} ; time_bnds = {}, {} ; T = {k} ; }}"#,
                    6 * k + 3,
                    6 * k,
                    6 * k + 6
                ),
            )
        })
        .collect();
    let out = s.arg("diurnal.nc");
    nco("ncrcat")
        .args(["-O", "--cb=2000,2002,1,1,4"])
        .args(&steps)
        .arg(&out)
        .succeeds();
    let d = Dump::of(&out);
    let want = "time: mean within days time: mean within years time: mean over years";
    assert_eq!(text(d.var("T"), "cell_methods").as_deref(), Some(want));
    assert_eq!(text(d.var("time"), "cell_methods").as_deref(), Some(want));
    assert!(d.var("climatology_bounds").attr("cell_methods").is_none());
    assert_eq!(d.var("time").numbers(), [3.0, 9.0, 15.0, 21.0]);
    let order: Vec<&str> = d
        .var("time")
        .attrs
        .iter()
        .map(|a| a.name.as_str())
        .collect();
    assert_eq!(order, ["units", "calendar", "cell_methods", "climatology"]);
    if !is_nco() {
        // -A would keep the existing file's time bounds beside the new ones.
        nco("ncra")
            .args(["-A", "--cb=2000,2002,1,1,4"])
            .args(&steps)
            .arg(&out)
            .run()
            .clean_failure("--cb");
    }
}
