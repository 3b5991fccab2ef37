// Resources inside a namespace are numbered in declaration order with the others (DXC);
// Slang lists them after every global one.
RWStructuredBuffer<float4> first;

namespace Lighting
{
    RWStructuredBuffer<float4> lights;

    namespace Shadows
    {
        RWStructuredBuffer<float4> casters;
    }
}

RWStructuredBuffer<float4> last;

[numthreads(1, 1, 1)]
void main(uint3 id : SV_DispatchThreadID)
{
    last[id.x] = first[id.x] + Lighting::lights[id.x] + Lighting::Shadows::casters[id.x];
}
