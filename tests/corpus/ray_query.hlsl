// Inline ray tracing (ray queries): a scene to trace against beside ordinary resources.
RaytracingAccelerationStructure scene : register(t0);
[[vk::binding(3, 1)]] RaytracingAccelerationStructure shadowScene : register(t1);

cbuffer Rays : register(b2)
{
    float4 origin;
    float4 direction;
};

RWStructuredBuffer<float> hitDistance : register(u4);

float trace(RaytracingAccelerationStructure where, float3 from, float3 dir)
{
    RayDesc ray;
    ray.Origin = from;
    ray.Direction = dir;
    ray.TMin = 0.001;
    ray.TMax = 100.0;
    RayQuery<RAY_FLAG_ACCEPT_FIRST_HIT_AND_END_SEARCH> q;
    q.TraceRayInline(where, RAY_FLAG_NONE, 0xFF, ray);
    q.Proceed();
    return q.CommittedStatus() == COMMITTED_TRIANGLE_HIT ? q.CommittedRayT() : -1.0;
}

[numthreads(8, 1, 1)]
void main(uint3 id : SV_DispatchThreadID)
{
    float d = trace(scene, origin.xyz, direction.xyz);
    float s = trace(shadowScene, origin.xyz + direction.xyz * d, -direction.xyz);
    hitDistance[id.x] = d + s;
}
