RaytracingAccelerationStructure scene : register(t0);
RWStructuredBuffer<uint> hits : register(u0);
[numthreads(1, 1, 1)]
void main(uint3 id : SV_DispatchThreadID)
{
    RayDesc ray = { float3(0, 0, 0), 0.0, float3(0, 0, 1), 10.0 };
    RayQuery<RAY_FLAG_NONE> q;
    q.TraceRayInline(scene, 0, 0xFF, ray);
    q.Proceed();
    hits[id.x] = q.CommittedStatus();
}
