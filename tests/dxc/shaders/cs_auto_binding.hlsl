// A resource without register() takes DXC's next free binding of set 0, in one pass with the
// counters: DXC walks its resources in creation order, so the append buffer's counter (made
// with the buffer) comes before 'points' (declared after it): counter 1, points 2.
AppendStructuredBuffer<uint> hits : register(u0);
StructuredBuffer<float4> points;

cbuffer Params : register(b3)
{
    float4 sphere;
};

[numthreads(64, 1, 1)]
void main(uint3 id : SV_DispatchThreadID)
{
    float4 p = points[id.x];
    if (distance(p.xyz, sphere.xyz) < sphere.w)
    {
        hits.Append(id.x);
    }
}
