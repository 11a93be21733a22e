//! ncap2 hyperslabs of variables the script defined from a hyperslab (issue 16, item
//! 6): such a variable lies at the hyperslab's offsets of its whole dimensions (the
//! rest missing), and later hyperslabs on either side index those whole dimensions; a
//! partial hyperslab of one element is a scalar. Values are NCO 5.1.4's (the tests
//! pass with `NCO_RS_BIN_DIR=/usr/bin`).

use crate::common::cdl;
use nco_tests::{ncdump, nco, Scratch};

const H: &str = "netcdf h { dimensions: time = UNLIMITED ; lev = 3 ; depth = 3 ; lat = 4 ; \
    variables: double time(time) ; float lev(lev) ; float depth(depth) ; float lat(lat) ; \
    float T(time, lev, lat) ; \
    data: time = 1, 2 ; lev = 100, 500, 1000 ; depth = 5, 10, 20 ; lat = -60, -20, 20, 60 ; \
    T = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24 ; }";

/// `ncap2 -v -s script`, then the declaration and data of each of `names`:
/// `"float y(lat) = _, -20, 20, _"`, joined by " | ".
#[track_caller]
fn run(script: &str, names: &[&str]) -> String {
    let s = Scratch::new();
    let inp = cdl(&s, "h", H);
    let out = s.arg("out.nc");
    nco("ncap2")
        .args(["-O", "-h", "-v", "-s", script])
        .arg(&inp)
        .arg(&out)
        .succeeds();
    let header = ncdump(&["-h"], &out);
    names
        .iter()
        .map(|n| {
            let decl = header
                .lines()
                .map(str::trim)
                .find(|l| {
                    l.ends_with(" ;")
                        && (l.contains(&format!(" {n}(")) || l.contains(&format!(" {n} ;")))
                })
                .unwrap_or_else(|| panic!("{n} not declared in {header}"))
                .trim_end_matches(" ;")
                .to_string();
            let text = ncdump(&["-v", n], &out);
            let body = text.split("data:").nth(1).unwrap_or("");
            let at = body.find(&format!(" {n} =")).expect("data") + n.len() + 3;
            let end = body[at..].find(';').expect("end") + at;
            let vals = body[at..end]
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            format!("{decl} = {vals}")
        })
        .collect::<Vec<_>>()
        .join(" | ")
}

#[test]
fn a_variable_from_a_hyperslab_is_indexed_in_its_whole_dimensions() {
    assert_eq!(
        run("y=lat(1:2); z=y(2:3);", &["y", "z"]),
        "float y(lat) = _, -20, 20, _ | float z(lat) = _, _, 20, _"
    );
    assert_eq!(
        run("y=lat(1:2); z=y(1:2)*2;", &["z"]),
        "float z(lat) = _, -40, 40, _"
    );
    assert_eq!(run("y=lat(1:2); z=y(0);", &["z"]), "float z = _");
    assert_eq!(run("y=T(1,:,1:2); z=y(1,0,1);", &["z"]), "float z = 14");
    assert_eq!(
        run("y=T(1,:,1:2); z=y(1,:,1:2)-T(1,:,1:2);", &["z"]),
        "float z(time, lev, lat) = _, _, _, _, _, _, _, _, _, _, _, _, _, 0, 0, _, _, 0, 0, _, _, 0, 0, _"
    );
}

#[test]
fn left_hand_hyperslabs_of_such_a_variable_index_its_whole_dimensions() {
    assert_eq!(
        run("y=lat(1:2); y(0)=5;", &["y"]),
        "float y(lat) = 5, -20, 20, _"
    );
    assert_eq!(
        run("y=lat(1:2); y(1:2)+=1;", &["y"]),
        "float y(lat) = _, -19, 21, _"
    );
    assert_eq!(
        run("y=T(1,:,1:2); y(0,0,0)=1;", &["y"]),
        "float y(time, lev, lat) = 1, _, _, _, _, _, _, _, _, _, _, _, _, 14, 15, _, _, 18, 19, _, _, 22, 23, _"
    );
}

#[test]
fn hyperslabs_with_strides_negative_indices_and_one_element() {
    assert_eq!(run("y=lat(1:1);", &["y"]), "float y = -20");
    assert_eq!(run("y=T(0:0,1:1,1:1);", &["y"]), "float y = 6");
    assert_eq!(run("y=T(0,1,1:1);", &["y"]), "float y = 6");
    assert_eq!(run("y=T(-1,0,0);", &["y"]), "float y = 13");
    assert_eq!(run("y=T(1,-1,-1);", &["y"]), "float y = 24");
    assert_eq!(run("y=T(-1,:,-1);", &["y"]), "float y(lev) = 16, 20, 24");
    assert_eq!(run("y=lat(-3:-2);", &["y"]), "float y(lat) = _, -20, 20, _");
    assert_eq!(
        run("y=T(:,::2,1);", &["y"]),
        "float y(time, lev, lat) = _, 2, _, _, _, 10, _, _, _, _, _, _, _, 14, _, _, _, 22, _, _, _, _, _, _"
    );
    assert_eq!(
        run("y[$lat]=0.0; y(1:2)=depth(0:1);", &["y"]),
        "double y(lat) = 0, 5, 10, 0"
    );
}

#[test]
fn bad_values_on_other_dimensions_of_the_same_size() {
    // Both refuse `lev[$lev]=depth` (no shared dimension to broadcast over); ours says
    // how to take the values in order. `lev[$lev]=depth(:)` works (ncap_corpus).
    let s = Scratch::new();
    let inp = cdl(&s, "h", H);
    crate::common::bad_input(
        "ncap2",
        &["-v", "-s", "lev[$lev]=depth;", &inp],
        "on other dimensions",
        "share no dimensions",
    );
}
