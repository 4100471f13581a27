"""`kubeview render-manifests SCENE`: print the YAML that runs a render on a real cluster.

The scene is validated with the renderer's own loader first, so a bad scene fails here, in one line,
instead of in a producer pod. The Secret gets a fresh random token on every run.
"""

from __future__ import annotations

import argparse
import sys

from kubeview.render.job_spec import load_spec, new_token
from kubeview.render.manifests import SpecError, all_objects, to_yaml


def run(args: argparse.Namespace) -> int:
    from kubeview.render.inputs import choose_scene
    from kubeview.render.local import RenderError
    from renderer.scene import SceneError

    try:
        # --spp/--width: checked against the scene as `--render` checks them, passed to the producer
        overrides = choose_scene(args.scene, spp=args.spp, width=args.width).producer_args()
        spec = load_spec(args.scene, token=new_token(), namespace=args.render_namespace, replicas=args.replicas,
                         cpu=args.cpu, gpu=args.gpu, image=args.image, job_args=tuple(overrides))
    except (SceneError, SpecError, RenderError) as e:
        sys.stderr.write(f"kubeview: {e}\n")
        return 2
    sys.stdout.write(to_yaml(all_objects(spec)))
    return 0
