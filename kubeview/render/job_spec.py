"""The render job's spec from a scene argument: the renderer's loader validates the scene first, so a
bad scene fails in one line here instead of in a producer pod (render-manifests and KubeRenderJob)."""

from __future__ import annotations

import secrets

from kubeview.render.manifests import RenderSpec


def load_spec(scene_arg: str, *, token: str, namespace: str, replicas: int, cpu: str, gpu: int,
              image: str, job_args: tuple[str, ...] = ()) -> RenderSpec:
    """The validated RenderSpec for a scene path or bundled name; raises SceneError or SpecError."""
    from renderer import scene as scenes

    sc = scenes.load(scenes.resolve(scene_arg))
    spec = RenderSpec(scene_text=sc.text, scene_name=sc.name, token=token, namespace=namespace,
                      replicas=replicas, cpu=cpu, gpu=gpu, image=image, job_args=job_args)
    spec.check()
    return spec


def new_token() -> str:
    """A fresh shared secret for producer and consumers (the Secret's, one per render)."""
    return secrets.token_hex(32)
