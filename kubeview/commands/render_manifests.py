"""`kubeview render-manifests SCENE`: print the YAML that runs a render on a real cluster.

The scene is validated with the renderer's own loader first, so a bad scene fails here, in one line,
instead of in a producer pod. The Secret gets a fresh random token on every run.
"""

from __future__ import annotations

import argparse
import sys

from kubeview import cli_types as t
from kubeview.commands.options import scene_overrides

NAME = "render-manifests"  # `kubeview render-manifests`


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    man = sub.add_parser(NAME, help="print the YAML that runs a render on a real cluster",
                         description="Print Namespace, ConfigMap, Secret, producer and consumers, RBAC: "
                                     "ready for `kubectl apply -f -`.")
    man.add_argument("scene", help="scene YAML path or bundled name")
    man.add_argument("--replicas", type=t.int_range(1, 10_000), default=4, help="consumer replicas (default: 4)")
    man.add_argument("--cpu", default="1000m", type=t.cpu_amount, help="consumer cpu request (default: 1000m)")
    man.add_argument("--gpu", type=int, choices=[0, 1], default=0, help="1: consumers request nvidia.com/gpu: 1")
    man.add_argument("--image", default="kubeview:latest", help="container image (default: kubeview:latest)")
    man.add_argument("--namespace", dest="render_namespace", default="kubeview-render",
                     help="namespace for the render (default: kubeview-render)")
    scene_overrides(man)
    return man


def run(args: argparse.Namespace) -> int:
    from kubeview.render.inputs import choose_scene
    from kubeview.render.job_spec import load_spec, new_token
    from kubeview.render.local import RenderError
    from kubeview.render.manifests import SpecError, all_objects, to_yaml
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
