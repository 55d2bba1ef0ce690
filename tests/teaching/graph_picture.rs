//! The graph-picture example writes the reused square's reverse pass as DOT: three named
//! boxes with their adjoints and four arrows, two per reuse; and renders it where Graphviz
//! is installed.

#[allow(dead_code)]
#[path = "../../examples/graph_picture.rs"]
mod graph_picture;

use graph_picture::{dot, write_picture, Rendered};

#[test]
fn the_dot_file_draws_three_nodes_and_four_edges() {
    let dot = dot().expect("a finite pass");
    assert!(dot.starts_with("digraph backward {"), "{dot}");
    assert_eq!(dot.matches("->").count(), 4, "{dot}");
    assert_eq!(dot.matches("[label=\"x\\n").count(), 1, "{dot}");
    assert!(dot.contains("label=\"x\\nvariable\\nvalue 2.000000000000\\nadjoint 8.000000000000\""));
    assert!(dot.contains("label=\"square\\nmul\\nvalue 4.000000000000\\nadjoint 2.000000000000\""));
    assert!(dot.contains("label=\"loss\\nadd\\nvalue 8.000000000000\\nadjoint 1.000000000000\""));
    assert_eq!(dot.matches("n0 -> n1").count(), 2, "{dot}");
    assert_eq!(dot.matches("n1 -> n2").count(), 2, "{dot}");
}

#[test]
fn the_picture_is_written_and_rendered_when_graphviz_is_installed() {
    let dir = std::env::temp_dir().join(format!("autodiff-graph-picture-{}", std::process::id()));
    let path = dir.join("nested").join("reused_square.dot");
    let rendered = write_picture(&path).expect("written");
    assert_eq!(
        std::fs::read_to_string(&path).expect("readable"),
        dot().expect("dot")
    );
    match rendered {
        Rendered::Svg(svg) => {
            let svg = std::fs::read_to_string(svg).expect("an svg file");
            assert!(svg.contains("<svg"), "{svg}");
        }
        Rendered::NoGraphviz => {}
    }
    std::fs::remove_dir_all(&dir).expect("cleaned up");
}
